import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { AuditLog } from "@svc/core/audit"
import { PrincipalsRepo, ServiceKeysRepo } from "@svc/core/db"
import { DependencyUnavailable, Forbidden, InvalidRequest, NotFound } from "@svc/core/errors"
import { type Caller, CurrentCaller, firstUncoveredGrant, Installation } from "@svc/core/iam"
import { Limits, ServiceKeyId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { newServiceKey } from "./store.js"
import { exportedFn } from "@svc/core/observability"

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

/** How the administrator authenticated, as non-secret ids for the audit trail. */
const via = (caller: Caller) =>
  caller.credential._tag === "ServiceKey"
    ? { credential: "service-key", credentialId: caller.credential.keyId }
    : { credential: "session", credentialId: caller.credential.sessionId }

export class ServiceKeys extends Effect.Service<ServiceKeys>()("@svc/api/ServiceKeys", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ServiceKeysRepo
    const principals = yield* PrincipalsRepo
    const audit = yield* AuditLog
    const authorization = yield* Authorization

    /** The exact authority both endpoints need (SPEC 5.5.1, 5.5.5): current Installation `administer`. */
    const requireAdministrator = authorization.authorize("installation:administer", Installation)

    /** The caller must hold every grant of the key's principal (else 403, audited like any denial). */
    const requireCoverage = (caller: Caller, targetPrincipalId: string, action: "issue" | "revoke") =>
      Effect.gen(function* () {
        const missing = yield* firstUncoveredGrant(caller.principalId, targetPrincipalId)
        if (missing === undefined) return
        yield* audit.record({
          kind: "authorization.denied",
          outcome: "denied",
          actorPrincipalId: caller.principalId,
          resource: { kind: "principal", id: targetPrincipalId },
          details: { action: `service-key.${action}`, permission: missing, reason: "grant-not-held" }
        })
        return yield* new Forbidden({
          message: `The caller does not hold ${missing} where the key's principal holds it; a key carries every grant of its principal.`
        })
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /**
     * `POST /api/auth/service-keys` (SPEC 5.5): validates the principal and its scope, checks the
     * caller's authority, then stores the key (digest only) and its audit record in one
     * transaction. If that fails, the answer is 503 without the key, and the key row is removed on
     * a best-effort basis (in case the commit's outcome was lost, not its effect).
     */
    const issue = exportedFn("ServiceKeys.issue")(function* (request: IssueRequest) {
      const caller = yield* CurrentCaller
      yield* requireAdministrator
      const found = yield* principals.findLive(request.servicePrincipalId).pipe(
        Effect.catchTag("SqlError", unavailable("service key issuance: principal lookup failed"))
      )
      if (Option.isNone(found)) {
        return yield* invalid("No service principal has this id.", "/servicePrincipalId")
      }
      const principal = found.value
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
          // FOR SHARE until the key commits: a deletion of the principal that came first is seen
          // here (400, as for an unknown principal), one that comes later waits for this key.
          if (Option.isNone(yield* principals.lockLiveRetryable(principal.id))) {
            return yield* invalid("No service principal has this id.", "/servicePrincipalId")
          }
          const { key, digest } = newServiceKey()
          const row = yield* keys.insert({
            id,
            service_principal_id: principal.id,
            namespace_id: principal.namespace_id,
            name: request.name,
            digest,
            expires_in_seconds: request.expiresIn ?? Limits.serviceKeyExpiresInSeconds.default,
            issued_by: caller.principalId
          })
          const stored = { key, expiresAt: row.expires_at }
          yield* audit.record({
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
          keys.remove(id).pipe(
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
    const revoke = exportedFn("ServiceKeys.revoke")(function* (keyId: string) {
      const caller = yield* CurrentCaller
      yield* requireAdministrator
      const notFound = new NotFound({ message: "No active service key has this id." })
      const found = yield* keys.findActive(keyId).pipe(
        Effect.catchTag("SqlError", unavailable("service key revocation: key lookup failed"))
      )
      if (Option.isNone(found)) return yield* notFound
      const key = found.value
      yield* requireCoverage(caller, key.service_principal_id, "revoke").pipe(
        Effect.catchTag("SqlError", unavailable("service key revocation: grant check failed"))
      )
      const outcome = yield* sql.withTransaction(
        Effect.gen(function* () {
          const revoked = yield* keys.revoke(key.id)
          if (Option.isNone(revoked)) return "not-found" as const
          const audited = yield* sql.withTransaction(
            audit.record({
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

    return { issue, revoke }
  }),
  dependencies: [ServiceKeysRepo.Default, PrincipalsRepo.Default, AuditLog.Default, Authorization.Default]
}) {}
