/**
 * The approver of the `pairing` container (`svc gateway-pairing`; docs/decisions/kubernetes.md
 * "Device pairing"): it connects to the gateway on the Pod's own loopback (a local client, which
 * the gateway pairs silently), lists the pending pairing requests every second and approves only
 * those of the service's device id asking for the operator role with scopes within the ones the
 * service uses. Every other request stays pending for a human. A lost connection (the gateway
 * restarting) is retried after a pause, forever.
 */
import { Config, Data, Duration, Effect, Redacted, Schedule } from "effect"
import { type GatewayRpcError, type GatewaySession, gatewaySession } from "./gatewayRpc.js"
import { GATEWAY_PORT } from "./kubernetes/names.js"

/** The pairing container's environment (`pairingObjects.ts` sets it). */
export const PairingVariables = {
  gateway: "SVC_PAIRING_GATEWAY",
  deviceId: "SVC_PAIRING_DEVICE_ID",
  scopes: "SVC_PAIRING_SCOPES",
  token: "OPENCLAW_GATEWAY_TOKEN"
} as const

/** The scopes the service's RPC client asks for (workspace files); the approver grants no more. */
export const SERVICE_DEVICE_SCOPES: ReadonlyArray<string> = ["operator.read", "operator.admin"]
/** What the approver itself asks for: `device.pair.*` needs pairing, approving admin needs admin. */
const APPROVER_SCOPES = ["operator.read", "operator.pairing", "operator.admin"]

export interface PairingConfig {
  /** The gateway's base URL on the Pod's loopback. */
  readonly gateway: string
  readonly token: Redacted.Redacted<string>
  readonly deviceId: string
  readonly scopes: ReadonlyArray<string>
}

export const pairingConfig = Config.all({
  gateway: Config.string(PairingVariables.gateway).pipe(Config.withDefault(`http://127.0.0.1:${GATEWAY_PORT}`)),
  token: Config.redacted(PairingVariables.token),
  deviceId: Config.string(PairingVariables.deviceId).pipe(
    Config.validate({ message: "a device id is 64 hex digits", validation: (id) => /^[0-9a-f]{64}$/.test(id) })
  ),
  scopes: Config.string(PairingVariables.scopes).pipe(
    Config.withDefault(SERVICE_DEVICE_SCOPES.join(",")),
    Config.map((text) => text.split(",").map((scope) => scope.trim()).filter((scope) => scope !== ""))
  )
})

/** A pending request as `device.pair.list` reports it (the fields the decision reads). */
export interface PendingPairing {
  readonly requestId: string
  readonly deviceId: string
  readonly role?: string | undefined
  readonly roles?: ReadonlyArray<string> | undefined
  readonly scopes?: ReadonlyArray<string> | undefined
}

/** Whether `request` is the service's device asking for the operator role within `scopes`. */
export const approvable = (request: PendingPairing, config: Pick<PairingConfig, "deviceId" | "scopes">): boolean => {
  const roles = request.roles ?? (request.role === undefined ? [] : [request.role])
  return request.deviceId === config.deviceId &&
    roles.length > 0 && roles.every((role) => role === "operator") &&
    (request.scopes ?? []).every((scope) => config.scopes.includes(scope))
}

class PairingRefused extends Data.TaggedError("PairingRefused")<{ readonly method: string; readonly detail: string }> {}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const pendingOf = (payload: unknown): ReadonlyArray<PendingPairing> =>
  isRecord(payload) && Array.isArray(payload["pending"])
    ? payload["pending"].filter((entry): entry is PendingPairing =>
      isRecord(entry) && typeof entry["requestId"] === "string" && typeof entry["deviceId"] === "string")
    : []

/** One pass: approves the service's pending requests; returns the approved request ids. */
export const approvePending = (session: GatewaySession, config: Pick<PairingConfig, "deviceId" | "scopes">) =>
  Effect.gen(function* () {
    const listed = yield* session.call("device.pair.list", {})
    if (!listed.ok) return yield* new PairingRefused({ method: "device.pair.list", detail: `${listed.error?.code}: ${listed.error?.message}` })
    const approved: Array<string> = []
    for (const request of pendingOf(listed.payload).filter((entry) => approvable(entry, config))) {
      const answer = yield* session.call("device.pair.approve", { requestId: request.requestId })
      if (!answer.ok) {
        yield* Effect.logWarning("pairing: approval refused", { requestId: request.requestId, code: answer.error?.code, message: answer.error?.message })
        continue
      }
      approved.push(request.requestId)
      yield* Effect.logInfo("pairing: approved the service's device", { requestId: request.requestId, deviceId: request.deviceId, scopes: (request.scopes ?? []).join(",") })
    }
    return approved
  })

/** Runs forever: one session at a time, a pass every `interval`; a lost session is reopened. */
export const runApprover = (config: PairingConfig, interval: Duration.DurationInput = Duration.seconds(1)) =>
  Effect.scoped(
    Effect.gen(function* () {
      const session = yield* gatewaySession({ url: config.gateway, token: Redacted.value(config.token) }, { scopes: APPROVER_SCOPES })
      yield* Effect.logInfo("pairing: connected to the gateway")
      return yield* approvePending(session, config).pipe(Effect.repeat(Schedule.spaced(interval)))
    })
  ).pipe(
    Effect.tapError((error: GatewayRpcError | PairingRefused) =>
      Effect.logWarning("pairing: gateway session ended; reconnecting", {
        reason: error._tag === "GatewayRpcError" ? `${error.reason}: ${error.detail}` : `${error.method}: ${error.detail}`
      })),
    Effect.retry(Schedule.spaced(interval)),
    Effect.asVoid
  )
