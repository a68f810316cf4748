/**
 * Service accounts (SPEC 4.5, DESIGN §13): create (with a ServiceAccount Driver, also the
 * upstream account, recorded `creating` first so a lost answer is never a second account),
 * list, get, and a native account's `api_key` reference. Issuance and deletion, which talk to
 * the upstream in steps, are in `lifecycle.ts`.
 */
import { SqlClient } from "@effect/sql"
import type { PageParams } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { ServiceAccountsRepo } from "@svc/core/db"
import { ServiceAccountDriver } from "@svc/core/drivers/serviceAccount"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { type NamespaceId, ServiceAccountId } from "@svc/core/schema"
import { Effect, Either, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages, inNamespace } from "../auth/gatedPage.js"
import { namespaceRef, pageOf } from "../iam/access.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { secretRef } from "../secrets/policy.js"
import { serviceAccountRef } from "./policy.js"
import { upstreamDidNotAct, upstreamNameOf, upstreamUnavailable } from "./upstream.js"
import { toServiceAccount } from "./views.js"
import { exportedFn } from "@svc/core/observability"

export const accountNotFound = () => new NotFound({ message: "The service account does not exist." })

/** The one key a builtin Secret has (DESIGN §13). */
const SECRET_VALUE_KEY = "value"

export class ServiceAccounts extends Effect.Service<ServiceAccounts>()("@svc/api/ServiceAccounts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ServiceAccountsRepo
    const audit = yield* AuditLog
    const driver = yield* ServiceAccountDriver
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const pages = yield* GatedPages

    const recordCreated = (principalId: string, namespaceId: NamespaceId, id: ServiceAccountId, name: string, managed: boolean) =>
      audit.record({
        kind: "service_account.created",
        outcome: "success",
        actorPrincipalId: principalId,
        namespaceId,
        resource: { kind: "service_account", id },
        details: { name, managed }
      })

    const create = exportedFn("ServiceAccounts.create")(function* (namespaceId: NamespaceId, payload: { readonly name: string }) {
      const caller = yield* CurrentCaller
      yield* authorize("service_account:create", namespaceRef(namespaceId))
      const id = ServiceAccountId.make()
      const managed = Option.getOrUndefined(driver)
      const upstreamName = managed === undefined ? null : upstreamNameOf(payload.name, id)
      const row = yield* sql.withTransaction(Effect.gen(function* () {
        const namespace = yield* namespaces.lockForWrite(namespaceId)
        if (namespace.status === "failed") return yield* new ResourceConflict({ message: "The Namespace failed to provision." })
        const row = yield* repo.insert({
          id, namespace_id: namespaceId, name: payload.name,
          backend_id: managed?.backendId ?? null, upstream_name: upstreamName, state: managed === undefined ? "ready" : "creating"
        })
        if (managed === undefined) yield* recordCreated(caller.principalId, namespaceId, id, payload.name, false)
        return row
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      if (managed === undefined || upstreamName === null) return toServiceAccount(row)

      const created = yield* Effect.either(managed.createAccount(upstreamName))
      if (Either.isLeft(created)) {
        // Proven not created upstream: undo our record. Otherwise it stays `creating`, and
        // issuing or deleting finds the upstream account by its name.
        if (upstreamDidNotAct(created.left)) yield* repo.remove(id)
        return yield* upstreamUnavailable(created.left)
      }
      const linked = yield* sql.withTransaction(Effect.gen(function* () {
        const linked = yield* repo.link({ id, upstream_account_id: created.right.upstreamId })
        if (Option.isSome(linked)) yield* recordCreated(caller.principalId, namespaceId, id, payload.name, true)
        return linked
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      if (Option.isNone(linked)) {
        // A DELETE of this account ran meanwhile and may have looked upstream before the account
        // existed there: remove it ourselves (a 404 upstream is already gone), so none outlives the row.
        yield* managed.deleteAccount(created.right.upstreamId).pipe(
          Effect.tapError((error) => Effect.logWarning("upstream account of a deleted service account not removed").pipe(Effect.annotateLogs({ reason: error.reason }))),
          Effect.ignore
        )
        return yield* new ResourceConflict({ message: "The service account was deleted while it was being created." })
      }
      return toServiceAccount(linked.value)
    })

    const list = exportedFn("ServiceAccounts.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "service_account:read", "service_account", { id: "a.id", namespaceId: "a.namespace_id" })
      const rows = yield* pages.page({ ...inNamespace(sql, namespaceId), page: repo.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible) })
      const now = new Date()
      return rows.map((row) => toServiceAccount(row, now))
    })

    const get = exportedFn("ServiceAccounts.get")(function* (namespaceId: NamespaceId, serviceAccountId: ServiceAccountId) {
      yield* authorize("service_account:read", serviceAccountRef(namespaceId, serviceAccountId))
      const row = yield* repo.find({ id: serviceAccountId, namespace_id: namespaceId })
      return yield* Option.match(row, { onNone: () => Effect.fail(accountNotFound()), onSome: (r) => Effect.succeed(toServiceAccount(r)) })
    })

    /** SPEC 4.5: a native account's reference; the caller also needs `operate` on the Secret. */
    const setCredential = exportedFn("ServiceAccounts.setCredential")(function* (
      namespaceId: NamespaceId,
      serviceAccountId: ServiceAccountId,
      payload: { readonly kind: "api_key"; readonly secretRef: { readonly name: string; readonly key: string } }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("service_account:update", serviceAccountRef(namespaceId, serviceAccountId))
      yield* namespaces.requireLive(namespaceId)
      const write = Effect.gen(function* () {
        const row = yield* repo.lock({ id: serviceAccountId, namespace_id: namespaceId })
        if (Option.isNone(row)) return yield* accountNotFound()
        if (row.value.backend_id !== null) {
          return yield* new ResourceConflict({ message: "The account is Backend-managed: its credential is the Driver's access_token." })
        }
        const secretId = yield* repo.secretByName({ namespace_id: namespaceId, name: payload.secretRef.name })
        if (Option.isNone(secretId) || payload.secretRef.key !== SECRET_VALUE_KEY) {
          return yield* new NotFound({ message: "The Secret or its key does not exist in this Namespace." })
        }
        yield* authorize("secret:operate", secretRef(namespaceId, secretId.value))
        const updated = yield* repo.setNativeReference({ id: serviceAccountId, secret_id: secretId.value, secret_key: payload.secretRef.key })
        yield* audit.record({
          kind: "service_account.credential_set",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "service_account", id: serviceAccountId },
          details: { kind: "api_key", secretId: secretId.value }
        })
        return toServiceAccount(updated)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /**
     * SPEC 4: `{serviceAccountId}` is `sa_<id>`. Ours are `sa_<uuidv4>`, so any other id of that
     * shape names no account: the operation's own authorization, then 404.
     */
    const unknown = (namespaceId: NamespaceId, serviceAccountId: string, action: "read" | "update" | "delete") =>
      Effect.zipRight(authorize(`service_account:${action}`, serviceAccountRef(namespaceId, serviceAccountId)), Effect.fail(accountNotFound()))

    return { create, list, get, setCredential, unknown }
  }),
  dependencies: [ServiceAccountsRepo.Default, AuditLog.Default, Authorization.Default, NamespaceGuard.Default, GatedPages.Default]
}) {}
