/**
 * The Drivers a test wires in place of a process's main.ts (which selects them from its
 * configuration): the `builtin` Secret Driver over a fixed test key, shared by every server and
 * worker of a test so that what the API seals the worker can reveal; and, for API servers that
 * run no Agent gateway, a Compute Driver that answers every live operation "unavailable" (503).
 */
import { ComputeDriver, ComputeFailure, type ComputeDriverShape } from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { Effect, Layer, Redacted } from "effect"

export const TEST_SECRET_KEY = new Uint8Array(32).fill(7)

export const testSecretDriver = builtinSecretDriverLayer({ current: Redacted.make(TEST_SECRET_KEY) })

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

export const unavailableCompute = Layer.succeed(ComputeDriver, noCompute)
