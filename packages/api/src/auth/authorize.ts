import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { DependencyUnavailable, Forbidden, NotFound } from "@svc/core/errors"
import { CurrentCaller, decide, namespaceOf, type Permission, permission, type ResourceRef } from "@svc/core/iam"
import { Context, Effect } from "effect"
import { withExportedSpan } from "@svc/core/observability"

export type AuthorizationError = Forbidden | NotFound | DependencyUnavailable

/**
 * Runs `effect` on its own connection even when the caller is inside `sql.withTransaction`: a
 * denial ends the request, and the handler's transaction then rolls back, so an audit record
 * written inside it would be lost. A denial describes no change, so it commits on its own.
 */
const outsideTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.mapInputContext(effect, (context: Context.Context<R>) =>
    Context.omit(SqlClient.TransactionConnection)(context) as Context.Context<R>)

/** Policy that cannot be read fails closed (SPEC 5.9). */
const unavailable = (error: unknown) =>
  Effect.zipRight(
    Effect.logWarning("authorization could not reach the database", error),
    Effect.fail(new DependencyUnavailable({ message: "Authorization is unavailable; retry later." }))
  )

const readPermissionOf = (resource: ResourceRef): Permission => permission(resource.kind, "read")

/**
 * The exact-resource authorization of every protected handler (DESIGN §6, SPEC 5.9):
 * - allowed: continue;
 * - the resource is in a Namespace outside the caller's scope: 403 (the same answer whether or
 *   not it exists, so nothing leaks);
 * - the caller may not even read it: 404, never a hint that it exists;
 * - it may read it but lacks the exact permission (or a Restriction matches): 403.
 * Every denial is audited, on its own connection so the record survives the rollback of a
 * surrounding transaction. Policy is read from the database on every call; if it cannot be,
 * the request fails closed with 503.
 */
export const authorize = (
  required: Permission,
  resource: ResourceRef
): Effect.Effect<void, AuthorizationError, CurrentCaller | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const caller = yield* CurrentCaller
    const decision = yield* decide(caller, required, resource)
    if (decision._tag === "Allowed") return
    const hidden = decision.reason !== "out-of-scope" &&
      resource.kind !== "installation" &&
      required !== readPermissionOf(resource) &&
      (yield* decide(caller, readPermissionOf(resource), resource))._tag !== "Allowed"
    const notReadable = hidden || (decision.reason !== "out-of-scope" && resource.kind !== "installation" &&
      required === readPermissionOf(resource))
    yield* outsideTransaction(recordAudit({
      kind: "authorization.denied",
      outcome: "denied",
      actorPrincipalId: caller.principalId,
      namespaceId: namespaceOf(resource),
      resource: resource.kind === "installation" ? { kind: "installation", id: "installation" } : { kind: resource.kind, id: resource.id },
      details: { permission: required, reason: decision.reason }
    }))
    return yield* (notReadable
      ? new NotFound({ message: "The resource does not exist." })
      : new Forbidden({ message: `The caller lacks ${required} on this resource.` }))
  }).pipe(
    Effect.catchTag("SqlError", unavailable),
    withExportedSpan("Auth.authorize", { attributes: { permission: required, resourceKind: resource.kind }, captureStackTrace: false })
  )

/**
 * The exact-resource decision for the Agent's own principal, whose grants a deployment also
 * needs (SPEC 2.5, 4.4). A denial is 403 naming that principal (the operator's to grant, never a
 * deployment that fails later) and is audited as every denial is (SPEC 6): attributed to the caller
 * whose request it refuses, the principal that lacks the grant in its details.
 */
export const authorizeAgentPrincipal = (
  principalId: string,
  required: Permission,
  resource: Extract<ResourceRef, { readonly namespaceId: string }>
): Effect.Effect<void, Forbidden | DependencyUnavailable, CurrentCaller | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const caller = yield* CurrentCaller
    const decision = yield* decide({ principalId, namespaceId: resource.namespaceId }, required, resource)
    if (decision._tag === "Allowed") return
    yield* outsideTransaction(recordAudit({
      kind: "authorization.denied",
      outcome: "denied",
      actorPrincipalId: caller.principalId,
      namespaceId: resource.namespaceId,
      resource: { kind: resource.kind, id: resource.id },
      details: { permission: required, reason: decision.reason, principalId }
    }))
    return yield* new Forbidden({ message: `The Agent's service principal ${principalId} lacks ${required} on ${resource.id}.` })
  }).pipe(
    Effect.catchTag("SqlError", unavailable)
  )

/**
 * `authorize` (and `authorizeAgentPrincipal`) as a service: the SqlClient is taken once, so a feature service's methods need
 * only the `CurrentCaller`.
 */
export class Authorization extends Effect.Service<Authorization>()("@svc/api/Authorization", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    authorize: (required: Permission, resource: ResourceRef): Effect.Effect<void, AuthorizationError, CurrentCaller> =>
      authorize(required, resource).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
    authorizeAgentPrincipal: (
      principalId: string,
      required: Permission,
      resource: Extract<ResourceRef, { readonly namespaceId: string }>
    ): Effect.Effect<void, Forbidden | DependencyUnavailable, CurrentCaller> =>
      authorizeAgentPrincipal(principalId, required, resource).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }))
}) {}
