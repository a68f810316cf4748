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
import { withExportedSpan } from "@svc/core/observability"

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
 * A refused WebSocket handshake is answered here, on the Node response, without waiting for the
 * write (the platform then writes nothing more: the response has ended). The platform would wait
 * for it, uninterruptibly, and a write on a socket the browser has left (destroyed, or closed by
 * the peer while half-open) never finishes; the server's shutdown waits for every handshake's
 * request, so that wait would hold it forever. `no-store` is the request-id layer's, which runs
 * only for what the platform writes.
 */
const answeredHere = (request: HttpServerRequest.HttpServerRequest) => (response: HttpServerResponse.HttpServerResponse) =>
  Effect.sync(() => {
    const node = NodeHttpServerRequest.toServerResponse(request)
    if (node.writableEnded || response.body._tag !== "Uint8Array") return response
    node.writeHead(response.status, { ...response.headers, "cache-control": "no-store" })
    node.end(response.body.body)
    return response
  })

const serveNativeHost = (request: HttpServerRequest.HttpServerRequest, label: string) =>
  Effect.gen(function* () {
    const upgrade = isWebSocketUpgrade(request)
    // Node takes its own listeners off a socket it hands over for an upgrade: a browser that
    // resets it before `ws` has it would otherwise raise an unhandled error (the socket is
    // destroyed by the error either way).
    if (upgrade) NodeHttpServerRequest.toIncomingMessage(request).socket.on("error", () => undefined)
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
  }).pipe(
    Effect.catchAll((error) => Effect.flatMap(refusal(error), isWebSocketUpgrade(request) ? answeredHere(request) : Effect.succeed)),
    withExportedSpan("NativeAdmin.serve")
  )

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
