/**
 * Workspace files of a cluster gateway (SPEC 4.4), read and written through the gateway's own
 * WebSocket RPC (`agents.files.get` / `agents.files.set` of its default agent), reached like every
 * other gateway call through the endpoint resolver. Same codes as `local`: a missing file is
 * `WORKSPACE_FILE_NOT_FOUND`, a name `local` refuses (or the gateway calls unsupported or unsafe)
 * `WORKSPACE_PATH_INVALID`; a gateway that cannot be reached is `WORKSPACE_UNAVAILABLE`.
 *
 * A write that fails before its request reached the gateway is a known outcome (`permanent`: the
 * API answers 503 DEPENDENCY_UNAVAILABLE); one whose request was sent and never answered is not
 * (the API answers 503 UNKNOWN_OUTCOME).
 *
 * The client is the service's stable device (`deviceIdentityFromSecret`). A gateway that answers
 * `NOT_PAIRED` (the device's request waits for the Pod's `pairing` container) is asked again every
 * half second for `pairingWait`; still unpaired, the call is `WORKSPACE_UNAVAILABLE` (503).
 */
import { Duration, Effect, Schedule } from "effect"
import type { ComputeDriverShape, ComputeError, ComputeFailure, GatewayRef } from "../driver.js"
import { type DeviceIdentity, type GatewayEndpoint, type GatewayRpcError, gatewaySession, type RpcAnswer } from "../gatewayRpc.js"
import { workspaceFile } from "../local/workspaceFiles.js"
import { failure, KubernetesCodes } from "./client.js"
import { withExportedSpan } from "../../../observability/spans.js"

type WorkspaceAccess = Pick<ComputeDriverShape, "readWorkspaceFile" | "writeWorkspaceFile">

export interface WorkspaceRpcOptions {
  readonly device: DeviceIdentity
  /** How long a `NOT_PAIRED` gateway is asked again (default 20 s). */
  readonly pairingWait?: Duration.DurationInput | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
  readonly callTimeout?: Duration.DurationInput | undefined
}

const READ_SCOPES = ["operator.read"]
// `agents.files.set` needs `operator.admin`; `agents.list` needs `operator.read`.
const WRITE_SCOPES = ["operator.read", "operator.admin"]

const WRITE_KEEPS: ReadonlyArray<string> = [
  KubernetesCodes.WORKSPACE_FILE_NOT_FOUND,
  KubernetesCodes.WORKSPACE_PATH_INVALID,
  KubernetesCodes.WORKSPACE_CONTENT_INVALID,
  KubernetesCodes.WORKSPACE_UNAVAILABLE
]
const READ_KEEPS: ReadonlyArray<string> = [
  KubernetesCodes.WORKSPACE_FILE_NOT_FOUND,
  KubernetesCodes.WORKSPACE_PATH_INVALID,
  KubernetesCodes.GATEWAY_NOT_RUNNING
]

const pathInvalid = () => failure(KubernetesCodes.WORKSPACE_PATH_INVALID, "The workspace file name is not acceptable.", true)
const fileMissing = () => failure(KubernetesCodes.WORKSPACE_FILE_NOT_FOUND, "The workspace file does not exist.", true)
const unavailable = (permanent: boolean) =>
  failure(KubernetesCodes.WORKSPACE_UNAVAILABLE, "The gateway's workspace files cannot be reached.", permanent)

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The gateway refused the file itself: an unsupported name or an unsafe file (a link, a hard link). */
const refusesFile = (answer: RpcAnswer) =>
  answer.error?.code === "INVALID_REQUEST" && /^(unsupported file|unsafe workspace file) /.test(answer.error.message ?? "")

export const makeWorkspaceFiles = (
  endpointOf: (ref: GatewayRef) => Effect.Effect<GatewayEndpoint, ComputeError>,
  options: WorkspaceRpcOptions
): WorkspaceAccess => {
  const { device } = options
  const untilPaired = Schedule.spaced(Duration.millis(500)).pipe(Schedule.upTo(options.pairingWait ?? Duration.seconds(20)))

  const logged = (operation: string, ref: GatewayRef, detail: string) =>
    Effect.logWarning("kubernetes compute: workspace call failed", { operation, agentId: ref.agentId, revisionId: ref.revisionId, detail })

  /** Runs `use` over a session of the ref's gateway, with its default agent's id. */
  const withGateway = <A>(
    ref: GatewayRef,
    scopes: ReadonlyArray<string>,
    use: (call: (method: string, params: Record<string, unknown>) => Effect.Effect<RpcAnswer, GatewayRpcError>, agentId: string) => Effect.Effect<A, ComputeFailure | GatewayRpcError>
  ) =>
    Effect.scoped(
      Effect.gen(function* () {
        const endpoint = yield* endpointOf(ref).pipe(Effect.catchTag("ComputeNotImplemented", () => Effect.fail(unavailable(true))))
        const session = yield* gatewaySession(endpoint, { scopes, device, connectTimeout: options.connectTimeout, callTimeout: options.callTimeout }).pipe(
          Effect.retry({ schedule: untilPaired, while: (error) => error.code === "NOT_PAIRED" })
        )
        const listed = yield* session.call("agents.list", {})
        const agentId = listed.ok && isRecord(listed.payload) ? listed.payload["defaultId"] : undefined
        if (typeof agentId !== "string") {
          yield* logged("agents.list", ref, listed.ok ? "no default agent" : `${listed.error?.code}: ${listed.error?.message}`)
          return yield* unavailable(true)
        }
        return yield* use(session.call, agentId)
      })
    )

  const readWorkspaceFile: WorkspaceAccess["readWorkspaceFile"] = (ref, relative) =>
    Effect.gen(function* () {
      if (workspaceFile("/", relative) === undefined) return yield* pathInvalid()
      return yield* withGateway(ref, READ_SCOPES, (call, agentId) =>
        call("agents.files.get", { agentId, name: relative }).pipe(
          Effect.flatMap((answer): Effect.Effect<Uint8Array, ComputeFailure> => {
            const file = answer.ok && isRecord(answer.payload) ? answer.payload["file"] : undefined
            if (isRecord(file) && file["missing"] === true) return Effect.fail(fileMissing())
            if (isRecord(file) && typeof file["content"] === "string") return Effect.succeed(new TextEncoder().encode(file["content"]))
            if (!answer.ok && refusesFile(answer)) return Effect.fail(pathInvalid())
            return logged("agents.files.get", ref, `${answer.error?.code}: ${answer.error?.message}`).pipe(Effect.zipRight(Effect.fail(unavailable(false))))
          })
        ))
    }).pipe(
      Effect.catchTag("GatewayRpcError", (error) => logged("read", ref, `${error.reason}: ${error.detail}`).pipe(Effect.zipRight(Effect.fail(unavailable(false))))),
      // Kept: the file's own codes, and a gateway that is not there (the API answers 404 for an Agent that never ran).
      Effect.catchIf((error) => !READ_KEEPS.includes(error.code), () => Effect.fail(unavailable(false))),
      withExportedSpan("KubernetesCompute.readWorkspaceFile", { attributes: { agentId: ref.agentId } })
    )

  const writeWorkspaceFile: WorkspaceAccess["writeWorkspaceFile"] = (ref, relative, content) =>
    Effect.gen(function* () {
      if (workspaceFile("/", relative) === undefined) return yield* pathInvalid()
      const text = yield* Effect.try({
        try: () => new TextDecoder("utf-8", { fatal: true }).decode(content),
        catch: () => failure(KubernetesCodes.WORKSPACE_CONTENT_INVALID, "The workspace file content is not UTF-8.", true)
      })
      return yield* withGateway(ref, WRITE_SCOPES, (call, agentId) =>
        call("agents.files.set", { agentId, name: relative, content: text }).pipe(
          Effect.flatMap((answer): Effect.Effect<void, ComputeFailure> => {
            if (answer.ok) return Effect.void
            if (refusesFile(answer)) return Effect.fail(pathInvalid())
            return logged("agents.files.set", ref, `${answer.error?.code}: ${answer.error?.message}`).pipe(Effect.zipRight(Effect.fail(unavailable(true))))
          })
        ))
    }).pipe(
      // Not sent: nothing was written (known). Sent and unanswered: the outcome is unknown.
      Effect.catchTag("GatewayRpcError", (error) => logged("write", ref, `${error.reason}: ${error.detail}`).pipe(Effect.zipRight(Effect.fail(unavailable(!error.sent))))),
      // Anything else happened before the request was sent (the endpoint, the gateway's agent list).
      Effect.catchIf((error) => !WRITE_KEEPS.includes(error.code), () => Effect.fail(unavailable(true))),
      withExportedSpan("KubernetesCompute.writeWorkspaceFile", { attributes: { agentId: ref.agentId } })
    )

  return { readWorkspaceFile, writeWorkspaceFile }
}
