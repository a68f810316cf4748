/**
 * Secrets (DESIGN §7): named, write-only values of a Namespace. The value is sealed by the
 * Secret Driver inside the request and never leaves it: no response, log line, audit row or
 * error carries it (the service only ever holds it Redacted).
 */
import { SqlClient } from "@effect/sql"
import type { PageParams, Secret } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { type SecretRow, SecretsRepo } from "@svc/core/db"
import { SecretDriver } from "@svc/core/drivers/secret"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { type NamespaceId, SecretId } from "@svc/core/schema"
import { Effect, Option, Redacted } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages, inNamespace } from "../auth/gatedPage.js"
import { isUniqueViolation, namespaceRef, pageOf } from "../iam/access.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { secretRef } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

const toSecret = (row: SecretRow): Secret => ({
  id: row.id,
  namespaceId: row.namespace_id,
  name: row.name,
  ref: { kind: "secret", namespaceId: row.namespace_id, id: row.id },
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const notFound = () => new NotFound({ message: "The Secret does not exist." })

export class Secrets extends Effect.Service<Secrets>()("@svc/api/Secrets", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* SecretsRepo
    const driver = yield* SecretDriver
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const pages = yield* GatedPages

    const create = exportedFn("Secrets.create")(function* (
      namespaceId: NamespaceId,
      payload: { readonly name: string; readonly value: string }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("secret:create", namespaceRef(namespaceId))
      const sealed = yield* driver.seal(Redacted.make(payload.value))
      const id = SecretId.make()
      const insert = Effect.gen(function* () {
        yield* namespaces.lockForWrite(namespaceId)
        const row = yield* repo.insert({
          id, namespace_id: namespaceId, name: payload.name,
          driver: driver.name, key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag
        })
        yield* audit.record({
          kind: "secret.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "secret", id },
          details: { name: payload.name, keyId: sealed.keyId }
        })
        return toSecret(row)
      })
      return yield* sql.withTransaction(insert).pipe(
        Effect.catchTags({
          SqlError: (error) =>
            isUniqueViolation(error)
              ? Effect.fail(new ResourceConflict({ message: "A Secret with this name already exists in the Namespace." }))
              : Effect.die(error),
          ParseError: Effect.die,
          NoSuchElementException: Effect.die
        })
      )
    })

    const list = exportedFn("Secrets.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "secret:read", "secret", { id: "s.id", namespaceId: "s.namespace_id" })
      const rows = yield* pages.page({ ...inNamespace(sql, namespaceId), page: repo.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible) })
      return rows.map(toSecret)
    })

    const get = exportedFn("Secrets.get")(function* (namespaceId: NamespaceId, secretId: SecretId) {
      yield* authorize("secret:read", secretRef(namespaceId, secretId))
      const row = yield* repo.findLive({ id: secretId, namespace_id: namespaceId })
      return yield* Option.match(row, { onNone: () => Effect.fail(notFound()), onSome: (r) => Effect.succeed(toSecret(r)) })
    })

    const update = exportedFn("Secrets.update")(function* (
      namespaceId: NamespaceId,
      secretId: SecretId,
      payload: { readonly value: string }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("secret:update", secretRef(namespaceId, secretId))
      yield* namespaces.requireLive(namespaceId)
      const sealed = yield* driver.seal(Redacted.make(payload.value))
      const write = Effect.gen(function* () {
        const row = yield* repo.updateValue({
          id: secretId, namespace_id: namespaceId,
          driver: driver.name, key_id: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag
        })
        if (Option.isNone(row)) return yield* notFound()
        yield* audit.record({
          kind: "secret.updated",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "secret", id: secretId },
          details: { keyId: sealed.keyId }
        })
        return toSecret(row.value)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    const remove = exportedFn("Secrets.delete")(function* (namespaceId: NamespaceId, secretId: SecretId) {
      const caller = yield* CurrentCaller
      yield* authorize("secret:delete", secretRef(namespaceId, secretId))
      yield* namespaces.requireLive(namespaceId)
      const key = { id: secretId, namespace_id: namespaceId }
      const write = Effect.gen(function* () {
        const row = yield* repo.lockForDelete(key)
        if (Option.isNone(row)) return yield* notFound()
        const referrer = yield* repo.referrer(key)
        if (referrer !== undefined) {
          return yield* new ResourceConflict({ message: `The Secret is referenced by ${referrer}; remove the reference first.` })
        }
        yield* repo.remove(secretId)
        yield* audit.record({
          kind: "secret.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "secret", id: secretId },
          details: { name: row.value.name }
        })
      })
      yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, get, update, delete: remove }
  }),
  dependencies: [SecretsRepo.Default, AuditLog.Default, Authorization.Default, NamespaceGuard.Default, GatedPages.Default]
}) {}
