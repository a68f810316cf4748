/**
 * The Compute Driver the API uses for what it reads or writes live (workspace files,
 * diagnostics): one already provided (tests) wins; else the one the Installation selects over
 * the process's data dir. An API composed without a process configuration (in-process test
 * servers) gets a driver that answers every live operation "unavailable" (503), so the rest of
 * the API works without a Compute host.
 */
import { InstallationConfiguration, ProcessConfiguration } from "@svc/core/config"
import { ComputeDriver, ComputeFailure, type ComputeDriverShape, layerFromConfiguration } from "@svc/core/drivers/compute"
import { Effect, Layer, Option } from "effect"

const unavailable = (): Effect.Effect<never, ComputeFailure> =>
  Effect.fail(new ComputeFailure({ code: "COMPUTE_UNAVAILABLE", message: "No Compute host is configured for this process.", permanent: false }))

const noCompute: ComputeDriverShape = {
  id: "local",
  supportsExistingNamespace: false,
  provisionNamespace: unavailable,
  teardownNamespace: unavailable,
  startGateway: unavailable,
  stopGateway: unavailable,
  deleteGateway: unavailable,
  gatewayHealth: unavailable,
  diagnostics: unavailable,
  readWorkspaceFile: unavailable,
  writeWorkspaceFile: unavailable,
  privateEndpoint: unavailable,
  liveGateways: unavailable()
}

export const apiComputeDriver: Layer.Layer<ComputeDriver, never, InstallationConfiguration> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const provided = yield* Effect.serviceOption(ComputeDriver)
    if (Option.isSome(provided)) return Layer.succeed(ComputeDriver, provided.value)
    const process = yield* Effect.serviceOption(ProcessConfiguration)
    if (Option.isNone(process)) return Layer.succeed(ComputeDriver, noCompute)
    return layerFromConfiguration.pipe(Layer.provide(Layer.succeed(ProcessConfiguration, process.value)))
  })
)
