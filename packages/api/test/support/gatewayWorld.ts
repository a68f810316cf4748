/**
 * A worker beside an API under test, on the `local` Compute Driver with real gateways: the two
 * share the process configuration (data dir, installed runtime) and the Secret key, as
 * `npm start` does.
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

/** `api` is built from the Compute Driver the configuration selects (`Compute.layerFromConfiguration`). */
export const withWorker = <A, E, R>(api: Layer.Layer<A, E, R>, dataDir: string) =>
  WorkerLive({ pollInterval: Duration.millis(200) }).pipe(
    Layer.provide(Compute.layerFromConfiguration),
    Layer.provideMerge(api),
    Layer.provideMerge(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
    Layer.provideMerge(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: testRuntimeRoot() } as unknown as LoadedProcessConfig)),
    Layer.provideMerge(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) }))
  )

/** The test API (`apiTestLayerWith`) and a worker, with logs captured. */
export const gatewayWorldLayer = (dataDir: string) =>
  withWorker(apiTestLayerWith(Compute.layerFromConfiguration), dataDir).pipe(Layer.provideMerge(LogCapture.layer))
