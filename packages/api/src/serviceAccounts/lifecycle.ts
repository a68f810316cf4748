/**
 * The steps of a Backend-managed account that talk to the upstream (SPEC 4.5, DESIGN §13):
 * issuing its one `access_token` (sealed as the account-owned record, keys `token` and
 * `workspace-id`; 409 the second time) and deletion, which removes the upstream credential,
 * the sealed record and the upstream account, in that order, before our row. A deletion
 * interrupted by the upstream leaves the account `deleting`; repeating DELETE continues it.
 */
import { SqlClient } from "@effect/sql"
import { AuditLog } from "@svc/core/audit"
import { type ServiceAccountRow, ServiceAccountsRepo } from "@svc/core/db"
import { SecretDriver } from "@svc/core/drivers/secret"
import { ServiceAccountDriver, type ServiceAccountDriverShape } from "@svc/core/drivers/serviceAccount"
import { ResourceConflict } from "@svc/core/errors"
import { CurrentCaller } from "@svc/core/iam"
import type { NamespaceId, ServiceAccountId } from "@svc/core/schema"
import { Effect, Option, Redacted } from "effect"
import { Authorization } from "../auth/authorize.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { serviceAccountRef } from "./policy.js"
import { accountNotFound } from "./service.js"
import { noDriver, upstreamUnavailable } from "./upstream.js"
import { toServiceAccount } from "./views.js"
import { exportedFn } from "@svc/core/observability"

export class ServiceAccountLifecycle extends Effect.Service<ServiceAccountLifecycle>()("@svc/api/ServiceAccountLifecycle", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ServiceAccountsRepo
    const audit = yield* AuditLog
    const secrets = yield* SecretDriver
    const selected = yield* ServiceAccountDriver
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard

    const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))

    /** The upstream account of a row, adopting it by name when its create's answer was lost. */
    const upstreamAccount = (driver: ServiceAccountDriverShape, row: ServiceAccountRow) =>
      row.upstream_account_id !== null || row.upstream_name === null
        ? Effect.succeed(Option.fromNullable(row.upstream_account_id))
        : driver.findAccount(row.upstream_name).pipe(Effect.mapError(upstreamUnavailable))

    const issueCredential = exportedFn("ServiceAccounts.issueCredential")(function* (
      namespaceId: NamespaceId,
      serviceAccountId: ServiceAccountId
    ) {
      const caller = yield* CurrentCaller
      const key = { id: serviceAccountId, namespace_id: namespaceId }
      yield* authorize("service_account:update", serviceAccountRef(namespaceId, serviceAccountId))
      const found = yield* repo.find(key)
      if (Option.isNone(found)) return yield* accountNotFound()
      if (Option.isNone(selected)) return yield* noDriver()
      const driver = selected.value
      if (found.value.backend_id === null) {
        return yield* new ResourceConflict({ message: "The account is native: set its api_key reference instead." })
      }
      if (found.value.state === "creating") {
        const adopted = yield* upstreamAccount(driver, found.value)
        if (Option.isNone(adopted)) {
          return yield* new ResourceConflict({ message: "The account's upstream account was never created; delete the account." })
        }
        yield* inTransaction(repo.link({ id: serviceAccountId, upstream_account_id: adopted.value }))
      }
      // The row stays locked across the upstream call: a concurrent issuance waits, then sees ours.
      return yield* inTransaction(Effect.gen(function* () {
        const row = yield* repo.lock(key)
        if (Option.isNone(row)) return yield* accountNotFound()
        if (row.value.state !== "ready" || row.value.upstream_account_id === null) {
          return yield* new ResourceConflict({ message: "The account is being deleted." })
        }
        if (row.value.credential_kind !== null) {
          return yield* new ResourceConflict({ message: "The account's credential was already issued; rotation is unsupported." })
        }
        const issued = yield* driver.issueCredential(row.value.upstream_account_id, serviceAccountId).pipe(
          Effect.mapError(upstreamUnavailable)
        )
        const record = JSON.stringify({ token: Redacted.value(issued.accessToken), "workspace-id": issued.workspaceId })
        const sealed = yield* secrets.seal(Redacted.make(record))
        const updated = yield* repo.recordIssued({
          id: serviceAccountId,
          credential_upstream_id: issued.id,
          expires_at: issued.expiresAt,
          driver: secrets.name, key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag
        })
        yield* audit.record({
          kind: "service_account.credential_issued",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "service_account", id: serviceAccountId },
          details: { kind: "access_token", keyId: sealed.keyId }
        })
        return toServiceAccount(updated)
      }))
    })

    const recordDeleted = (principalId: string, row: ServiceAccountRow) =>
      audit.record({
        kind: "service_account.deleted",
        outcome: "success",
        actorPrincipalId: principalId,
        namespaceId: row.namespace_id,
        resource: { kind: "service_account", id: row.id },
        details: { name: row.name, managed: row.backend_id !== null }
      })

    /** The upstream steps, in SPEC order; each is idempotent, so a repeated DELETE resumes. */
    const removeManaged = (driver: ServiceAccountDriverShape, row: ServiceAccountRow) =>
      Effect.gen(function* () {
        const account = yield* upstreamAccount(driver, row)
        if (row.credential_upstream_id !== null && Option.isSome(account)) {
          yield* driver.deleteCredential(account.value, row.credential_upstream_id).pipe(Effect.mapError(upstreamUnavailable))
        }
        yield* inTransaction(Effect.zipRight(repo.removeSealedCredential(row.id), repo.forgetUpstreamCredential(row.id)))
        if (Option.isSome(account)) yield* driver.deleteAccount(account.value).pipe(Effect.mapError(upstreamUnavailable))
      })

    const remove = exportedFn("ServiceAccounts.delete")(function* (namespaceId: NamespaceId, serviceAccountId: ServiceAccountId) {
      const caller = yield* CurrentCaller
      const key = { id: serviceAccountId, namespace_id: namespaceId }
      yield* authorize("service_account:delete", serviceAccountRef(namespaceId, serviceAccountId))
      yield* namespaces.requireLive(namespaceId)
      const row = yield* inTransaction(Effect.gen(function* () {
        const row = yield* repo.lock(key)
        if (Option.isNone(row)) return yield* accountNotFound()
        const referrer = yield* repo.referrer(key)
        if (referrer !== undefined) {
          return yield* new ResourceConflict({ message: `The service account is used by ${referrer}; remove the reference first.` })
        }
        if (row.value.backend_id !== null && Option.isNone(selected)) return yield* noDriver()
        if (row.value.backend_id === null) {
          yield* repo.remove(serviceAccountId)
          yield* recordDeleted(caller.principalId, row.value)
        } else if (row.value.state !== "deleting") yield* repo.markDeleting(serviceAccountId)
        return row.value
      }))
      if (row.backend_id === null || Option.isNone(selected)) return
      yield* removeManaged(selected.value, row)
      // A concurrent DELETE of the same account may have finished first: one removal, one audit event.
      yield* inTransaction(Effect.gen(function* () {
        if (Option.isNone(yield* repo.lock(key))) return
        yield* repo.remove(serviceAccountId)
        yield* recordDeleted(caller.principalId, row)
      }))
    })

    return { issueCredential, delete: remove }
  }),
  dependencies: [ServiceAccountsRepo.Default, AuditLog.Default, Authorization.Default, NamespaceGuard.Default]
}) {}
