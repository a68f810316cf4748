/**
 * An open Control UI WebSocket is held to its admission (SPEC 3 "Session", 4.4 rule 2, 5.1, 5.8):
 * a socket lives for as long as the browser keeps it, so its session, grant and Agent state are
 * checked again every `NativeAdminRecheck.every`, and a lapse (sign-out, a disabled or revoked
 * account, expiry, a removed `agent:administer`, the Agent stopped, deleted or serving another
 * revision, or a check that cannot be made) destroys both sockets.
 *
 * Nothing here may hold the server's shutdown (docs/decisions/native-admin.md): the watcher is a
 * fiber of its own that ends the relay by destroying its sockets, never by being waited on; the
 * relay is interruptible, and its interrupt handler destroys both sockets, so the shutdown's
 * interruption of the request ends it at once; and the watcher is interrupted without being
 * awaited when the relay ends, however it ends.
 */
import { HttpServerError, type HttpServerRequest } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { Cause, Context, Duration, Effect, Exit, Fiber, HashSet, Option } from "effect"
import type { AuthSettings } from "../auth/settings.js"
import { type Admitted, type Lapse, admissionLapse } from "./admit.js"
import type { Relayed } from "./forward.js"

/**
 * How often an open socket is checked, and how long one check may take before it counts as a
 * lapse (a database that does not answer fails closed like one that fails). A Reference, so
 * tests can shorten it.
 */
export class NativeAdminRecheck extends Context.Reference<NativeAdminRecheck>()("@svc/api/NativeAdminRecheck", {
  defaultValue: (): { readonly every: Duration.Duration; readonly within: Duration.Duration } => ({
    every: Duration.seconds(10),
    within: Duration.seconds(5)
  })
}) {}

/** Destroys the sockets first (bounded), then tells: one log line and one audit record. */
const closeFor = (admitted: Admitted, reason: Lapse, controller: AbortController) =>
  Effect.gen(function* () {
    controller.abort()
    const ids = { agentId: admitted.agentId, principalId: admitted.caller.principalId, reason }
    yield* Effect.logInfo("native admin: the WebSocket is closed, its admission lapsed", ids)
    yield* recordAudit({
      kind: "agent.native-admin-closed",
      outcome: "success",
      actorPrincipalId: admitted.caller.principalId,
      namespaceId: admitted.namespaceId,
      resource: { kind: "agent", id: admitted.agentId },
      details: { revisionId: admitted.revisionId, reason }
    }).pipe(Effect.catchAll((error) => Effect.logWarning("native admin: the session-closed audit failed", error)))
  })

const watch = (request: HttpServerRequest.HttpServerRequest, admitted: Admitted, controller: AbortController) =>
  Effect.gen(function* () {
    const { every, within } = yield* NativeAdminRecheck
    for (;;) {
      yield* Effect.sleep(every)
      // Disconnected: a check stuck in the database is left behind, neither awaited by the
      // timeout nor by the interruption that ends this watcher.
      const lapse = yield* Effect.timeoutTo(Effect.disconnect(admissionLapse(request, admitted)), {
        duration: within,
        onSuccess: (lapse) => lapse,
        onTimeout: () => Option.some<Lapse>("unavailable")
      })
      // Uninterruptible once decided: the relay ends as the sockets go, and its end interrupts
      // this fiber, which must still log and audit the closure.
      if (Option.isSome(lapse)) return yield* Effect.uninterruptible(closeFor(admitted, lapse.value, controller))
    }
  })

/**
 * Runs `relay` (given the signal that destroys its sockets) while a watcher checks the socket's
 * admission. The request handler runs with interruption masked, and a fork inherits that: both
 * the relay and the watcher are made interruptible explicitly. An interrupted relay (the
 * server's shutdown, or the browser gone) is answered here with the status the platform would
 * log and no body: its interrupt handler destroyed both sockets, and the platform, given the
 * interruption, would write an answer on the socket already gone and wait, uninterruptibly and
 * forever, for that write to finish, which holds the server's shutdown.
 */
export const heldWhileAdmitted = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  admitted: Admitted,
  relay: (signal: AbortSignal) => Effect.Effect<Relayed, E, R>
): Effect.Effect<Relayed, E, R | SqlClient.SqlClient | AuthSettings> =>
  Effect.gen(function* () {
    const controller = new AbortController()
    const watcher = yield* Effect.forkDaemon(Effect.interruptible(watch(request, admitted, controller)))
    const exit = yield* Effect.exit(Effect.interruptible(relay(controller.signal)))
    yield* Fiber.interruptFork(watcher)
    if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) {
      return { status: HashSet.has(Cause.interruptors(exit.cause), HttpServerError.clientAbortFiberId) ? 499 : 503 }
    }
    return yield* exit
  })
