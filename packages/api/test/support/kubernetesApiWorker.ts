/**
 * The API and a worker over a `kubernetes` Compute Driver, for the end-to-end kubernetes suites:
 * the Installation selects the driver, the worker polls quickly, Secrets are sealed with a fresh
 * key and logs are captured.
 */
import {
  defaultInstallationConfig,
  type InstallationConfig,
  InstallationConfiguration,
  type LoadedProcessConfig,
  ProcessConfiguration
} from "@svc/core/config"
import type { ComputeDriver } from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { WorkerLive } from "@svc/worker"
import { Duration, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { testRuntimeRoot } from "../../../../testing/gatewayRuntime.js"
import { LogCapture } from "../../../../testing/server.js"
import { apiTestLayerWith } from "./iamServer.js"

export const kubernetesInstallation = {
  ...defaultInstallationConfig,
  drivers: { ...defaultInstallationConfig.drivers, compute: { id: "kubernetes" as const } }
}

export const kubernetesApiWorkerLayer = <R>(
  kubernetes: Layer.Layer<ComputeDriver, never, R>,
  dataDir: string,
  installation: InstallationConfig = kubernetesInstallation,
  recoveryInterval?: Duration.DurationInput
) =>
  WorkerLive({ pollInterval: Duration.millis(200), recoveryInterval }).pipe(
    Layer.provide(kubernetes),
    Layer.provideMerge(apiTestLayerWith(kubernetes, installation)),
    Layer.provideMerge(Layer.succeed(InstallationConfiguration, installation)),
    Layer.provideMerge(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: testRuntimeRoot() } as unknown as LoadedProcessConfig)),
    Layer.provideMerge(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) })),
    Layer.provideMerge(LogCapture.layer)
  )
