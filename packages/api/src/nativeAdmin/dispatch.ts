/**
 * Native-host dispatch (SPEC 5.8): a request whose `Host` is `<label>.<agentHostSuffix>` never
 * reaches the HttpApi router; it is admitted and relayed to the Agent's gateway. It still runs
 * inside the pipeline's request-id layer, so every refusal is a SPEC 7.1 envelope with
 * `meta.requestId` and `x-request-id`. Any other Host goes on to the API unchanged.
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { agentHostLabel, type NativeAdminConfig } from "@svc/core/config"
import type { ComputeDriver } from "@svc/core/drivers/compute"
import { NATIVE_ADMIN_ROUTE, ROUTE_ATTRIBUTE } from "@svc/core/observability"
import { CurrentRequestId } from "@svc/core/schema"
import { Effect } from "effect"
import type { AuthSettings } from "../auth/settings.js"
import { admitNativeAdmin } from "./admit.js"
import { relay, relayUpgrade } from "./forward.js"
import { heldWhileAdmitted } from "./lapse.js"
import { recordAudit } from "@svc/core/audit"
import { refusal } from "../dispatchRefusal.js"

const isWebSocketUpgrade = (request: HttpServerRequest.HttpServerRequest): boolean =>
  String(request.headers["upgrade"] ?? "").toLowerCase() === "websocket"

/** A WebSocket opens a Control UI session: audited; plain page and asset loads are not. */
const auditOpened = (admitted: { readonly caller: { readonly principalId: string }; readonly namespaceId: string; readonly agentId: string; readonly revisionId: string }) =>
  recordAudit({
    kind: "agent.native-admin-opened",
    outcome: "success",
    actorPrincipalId: admitted.caller.principalId,
    namespaceId: admitted.namespaceId,
    resource: { kind: "agent", id: admitted.agentId },
    details: { revisionId: admitted.revisionId }
  })

/**
 * The platform writes an answer with a body and waits, uninterruptibly, for the write to finish,
 * which on a socket already destroyed never happens; and the server's shutdown waits for every
 * WebSocket handshake's request. So a browser that left (during admission, or as its relay was
 * interrupted) is answered with no body.
 */
const unlessGone = (request: HttpServerRequest.HttpServerRequest) => (response: HttpServerResponse.HttpServerResponse) =>
  NodeHttpServerRequest.toIncomingMessage(request).socket.destroyed ? HttpServerResponse.empty({ status: response.status }) : response

const serveNativeHost = (request: HttpServerRequest.HttpServerRequest, label: string) =>
  Effect.gen(function* () {
    const upgrade = isWebSocketUpgrade(request)
    const admitted = yield* admitNativeAdmin(request, label, upgrade)
    if (upgrade) {
      yield* auditOpened(admitted).pipe(Effect.catchTag("SqlError", (error) =>
        Effect.logWarning("native admin: the session-opened audit failed", error)))
    }
    const requestId = yield* CurrentRequestId
    const relayed = yield* upgrade
      ? heldWhileAdmitted(request, admitted, (signal) => relayUpgrade(request, admitted.endpoint, signal))
      : relay(request, admitted.endpoint, requestId)
    // The answer is already written on the Node response; the platform writes nothing more.
    return HttpServerResponse.empty({ status: relayed.status })
  }).pipe(Effect.catchAll(refusal), Effect.map(unlessGone(request)), Effect.withSpan("NativeAdmin.serve"))

/**
 * The middleware for the pipeline's `dispatch` slot; its services are taken once, here, so the
 * returned middleware needs only the request.
 */
export const nativeAdminDispatch = (config: NativeAdminConfig) =>
  Effect.map(
    Effect.context<SqlClient.SqlClient | AuthSettings | ComputeDriver>(),
    (context) =>
    <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const label = agentHostLabel(request.headers["host"] ?? "", config.agentHostSuffix)
        if (label === undefined) return app
        // No API route matches an Agent host's paths: label its requests as such, not `unmatched`.
        return Effect.zipRight(
          Effect.annotateCurrentSpan(ROUTE_ATTRIBUTE, NATIVE_ADMIN_ROUTE),
          Effect.provide(serveNativeHost(request, label), context)
        )
      })
  )
