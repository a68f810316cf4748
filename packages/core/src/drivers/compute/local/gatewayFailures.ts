/**
 * What the `local` driver's Agent half fails with: the fixed codes of its ComputeFailures, and
 * host-side problems (file system, signals), which are logged with their cause and retried.
 */
import * as path from "node:path"
import { Effect } from "effect"
import { ComputeFailure, type GatewayRef } from "../driver.js"

export const GatewayCodes = {
  GATEWAY_CONFIG_REJECTED: "GATEWAY_CONFIG_REJECTED",
  GATEWAY_EXITED: "GATEWAY_EXITED",
  GATEWAY_START_TIMEOUT: "GATEWAY_START_TIMEOUT",
  GATEWAY_NOT_RUNNING: "GATEWAY_NOT_RUNNING",
  GATEWAY_SPEC_INVALID: "GATEWAY_SPEC_INVALID",
  GATEWAY_HOST_FAILURE: "GATEWAY_HOST_FAILURE",
  NAMESPACE_RUNTIME_MISSING: "NAMESPACE_RUNTIME_MISSING",
  RUNTIME_AUTHENTICATION_FAILED: "RUNTIME_AUTHENTICATION_FAILED",
  MODEL_PROBE_FAILED: "MODEL_PROBE_FAILED",
  WORKSPACE_FILE_NOT_FOUND: "WORKSPACE_FILE_NOT_FOUND",
  WORKSPACE_PATH_INVALID: "WORKSPACE_PATH_INVALID"
} as const

export const failure = (code: string, message: string, permanent: boolean) => new ComputeFailure({ code, message, permanent })

/** A host-side problem (file system, signals): logged with its cause, retried. */
export const hostFailure = (operation: string, ref: GatewayRef) => (cause: unknown) =>
  Effect.logWarning("local compute: gateway operation failed", { operation, ...ref, cause: String(cause) }).pipe(
    Effect.zipRight(
      Effect.fail(failure(GatewayCodes.GATEWAY_HOST_FAILURE, "The gateway could not be managed on this host.", false))
    )
  )

export const host = <A>(operation: string, ref: GatewayRef, run: () => Promise<A>): Effect.Effect<A, ComputeFailure> =>
  Effect.tryPromise(run).pipe(Effect.catchAll(hostFailure(operation, ref)))

export const namespaceDir = (dataDir: string, namespaceId: string) => path.join(dataDir, "namespaces", namespaceId)
