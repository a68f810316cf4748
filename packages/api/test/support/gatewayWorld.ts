/**
 * The API and the worker over one database with the `local` Compute Driver, for tests that start
 * real gateways: both share the process configuration (data dir, installed runtime) and the
 * Secret key; logs are captured.
 */
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { WorkerLive } from "@svc/worker"
import { Duration, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { testRuntimeRoot } from "../../../../testing/gatewayRuntime.js"
import { LogCapture } from "../../../../testing/server.js"
import { apiTestLayerWith } from "./iamServer.js"

export const gatewayWorldLayer = (dataDir: string) =>
  WorkerLive({ pollInterval: Duration.millis(200) }).pipe(
    Layer.provide(Compute.layerFromConfiguration),
    Layer.provideMerge(apiTestLayerWith(Compute.layerFromConfiguration)),
    Layer.provideMerge(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
    Layer.provideMerge(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: testRuntimeRoot() } as unknown as LoadedProcessConfig)),
    Layer.provideMerge(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) })),
    Layer.provideMerge(LogCapture.layer)
  )
