import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { recordAudit } from "@svc/core/audit"
import { DependencyUnavailable, Forbidden, InvalidRequest, NotFound } from "@svc/core/errors"
import { type Caller, CurrentCaller, firstUncoveredGrant, Installation } from "@svc/core/iam"
import { Limits, ServiceKeyId } from "@svc/core/schema"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import { insertServiceKey, removeServiceKey } from "./store.js"

export interface IssueRequest {
  readonly servicePrincipalId: string
  readonly name: string
  readonly namespaceId?: string | undefined
  readonly expiresIn?: number | undefined
}

const unavailable = (message: string) => (error: SqlError) =>
  Effect.zipRight(
    Effect.logWarning(message, error),
    Effect.fail(new DependencyUnavailable({ message: "Service keys are unavailable; retry later." }))
  )

const invalid = (message: string, path: string) =>
  new InvalidRequest({ message, details: [{ code: "INVALID_VALUE", path }] })

/** The exact authority both endpoints need (SPEC 5.5.1, 5.5.5): current Installation `administer`. */
const requireAdministrator = authorize("installation:administer", Installation)

/** The caller must hold every grant of the key's principal (else 403, audited like any denial). */
const requireCoverage = (caller: Caller, targetPrincipalId: string, action: "issue" | "revoke") =>
  Effect.gen(function* () {
    const missing = yield* firstUncoveredGrant(caller.principalId, targetPrincipalId)
    if (missing === undefined) return
    yield* recordAudit({
      kind: "authorization.denied",
      outcome: "denied",
      actorPrincipalId: caller.principalId,
      resource: { kind: "principal", id: targetPrincipalId },
      details: { action: `service-key.${action}`, permission: missing, reason: "grant-not-held" }
    })
    return yield* new Forbidden({
      message: `The caller does not hold ${missing} where the key's principal holds it; a key carries every grant of its principal.`
    })
  })

/** How the administrator authenticated, as non-secret ids for the audit trail. */
const via = (caller: Caller) =>
  caller.credential._tag === "ServiceKey"
    ? { credential: "service-key", credentialId: caller.credential.keyId }
    : { credential: "session", credentialId: caller.credential.sessionId }

interface PrincipalRow {
  readonly id: string
  readonly kind: "human" | "service" | "agent"
  readonly namespace_id: string | null
}

/**
 * `POST /api/auth/service-keys` (SPEC 5.5): validates the principal and its scope, checks the
 * caller's authority, then stores the key (digest only) and its audit record in one
 * transaction. If that fails, the answer is 503 without the key, and the key row is removed on
 * a best-effort basis (in case the commit's outcome was lost, not its effect).
 */
export const issueServiceKey = Effect.fn("ServiceKeys.issue")(function* (request: IssueRequest) {
  const sql = yield* SqlClient.SqlClient
  const caller = yield* CurrentCaller
  yield* requireAdministrator
  const principals = yield* sql<PrincipalRow>`
    SELECT id, kind, namespace_id FROM principals WHERE id = ${request.servicePrincipalId} AND deleted_at IS NULL
  `.pipe(Effect.catchTag("SqlError", unavailable("service key issuance: principal lookup failed")))
  const principal = principals[0]
  if (principal === undefined) {
    return yield* invalid("No service principal has this id.", "/servicePrincipalId")
  }
  if (principal.kind !== "service") {
    return yield* invalid(
      principal.kind === "agent"
        ? "Agent principals cannot authenticate to the controller API."
        : "Keys are issued to service principals only.",
      "/servicePrincipalId"
    )
  }
  if (principal.namespace_id === null && request.namespaceId !== undefined) {
    return yield* invalid("The principal is Installation-scoped: omit namespaceId.", "/namespaceId")
  }
  if (principal.namespace_id !== null && request.namespaceId !== principal.namespace_id) {
    return yield* invalid("namespaceId must be the Namespace of the principal.", "/namespaceId")
  }
  yield* requireCoverage(caller, principal.id, "issue").pipe(
    Effect.catchTag("SqlError", unavailable("service key issuance: grant check failed"))
  )
  const id = ServiceKeyId.make()
  const stored = yield* sql.withTransaction(
    Effect.gen(function* () {
      const stored = yield* insertServiceKey({
        id,
        servicePrincipalId: principal.id,
        namespaceId: principal.namespace_id,
        name: request.name,
        expiresInSeconds: request.expiresIn ?? Limits.serviceKeyExpiresInSeconds.default,
        issuedBy: caller.principalId
      })
      yield* recordAudit({
        kind: "service-key.issued",
        outcome: "success",
        actorPrincipalId: caller.principalId,
        namespaceId: principal.namespace_id,
        resource: { kind: "service_key", id },
        details: {
          servicePrincipalId: principal.id,
          name: request.name,
          expiresAt: stored.expiresAt.toISOString(),
          ...via(caller)
        }
      })
      return stored
    })
  ).pipe(
    Effect.catchTag("SqlError", (error) =>
      removeServiceKey(id).pipe(
        Effect.catchAll(() => Effect.logWarning("service key issuance: best-effort removal failed").pipe(Effect.annotateLogs({ keyId: id }))),
        Effect.zipRight(unavailable("service key issuance: storing the key or its audit failed")(error))
      )
    )
  )
  return {
    id,
    servicePrincipalId: principal.id,
    ...(principal.namespace_id === null ? {} : { namespaceId: principal.namespace_id }),
    name: request.name,
    expiresAt: stored.expiresAt,
    key: stored.key
  }
})

/**
 * `DELETE /api/auth/service-keys/{keyId}` (SPEC 5.5.5): the same authority as issuance. The
 * revocation commits even if its audit record cannot be written (the audit runs in a
 * savepoint); that case answers 503 and the key stays revoked. Every API process reads keys
 * from storage on each request, so the next use anywhere is 401.
 */
export const revokeServiceKey = Effect.fn("ServiceKeys.revoke")(function* (keyId: string) {
  const sql = yield* SqlClient.SqlClient
  const caller = yield* CurrentCaller
  yield* requireAdministrator
  const notFound = new NotFound({ message: "No active service key has this id." })
  const keys = yield* sql<{ id: string; service_principal_id: string; namespace_id: string | null }>`
    SELECT id, service_principal_id, namespace_id FROM service_keys WHERE id = ${keyId} AND revoked_at IS NULL
  `.pipe(Effect.catchTag("SqlError", unavailable("service key revocation: key lookup failed")))
  const key = keys[0]
  if (key === undefined) return yield* notFound
  yield* requireCoverage(caller, key.service_principal_id, "revoke").pipe(
    Effect.catchTag("SqlError", unavailable("service key revocation: grant check failed"))
  )
  const outcome = yield* sql.withTransaction(
    Effect.gen(function* () {
      const revoked = yield* sql`
        UPDATE service_keys SET revoked_at = now() WHERE id = ${key.id} AND revoked_at IS NULL RETURNING id
      `
      if (revoked.length === 0) return "not-found" as const
      const audited = yield* sql.withTransaction(
        recordAudit({
          kind: "service-key.revoked",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId: key.namespace_id,
          resource: { kind: "service_key", id: key.id },
          details: { servicePrincipalId: key.service_principal_id, ...via(caller) }
        })
      ).pipe(
        Effect.as(true),
        Effect.catchTag("SqlError", (error) =>
          Effect.as(Effect.logWarning("service key revocation: the audit record could not be written", error), false))
      )
      return audited ? ("revoked" as const) : ("unaudited" as const)
    })
  ).pipe(Effect.catchTag("SqlError", unavailable("service key revocation failed")))
  if (outcome === "not-found") return yield* notFound
  if (outcome === "unaudited") {
    return yield* new DependencyUnavailable({
      message: "The key is revoked, but the revocation could not be audited."
    })
  }
  return { id: key.id, revoked: true as const }
})
