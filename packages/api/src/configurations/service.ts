/**
 * Configurations (SPEC 2.8, 4.3). Saving one queues no work and never touches a revision: a
 * deployment snapshots the Configuration it finds (the agents capability). Each bound Secret
 * needs the caller's exact `operate`, and the database refuses to delete a bound Secret.
 */
import { SqlClient } from "@effect/sql"
import type { Configuration, PageParams, SecretBindings } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { type ConfigurationRow, ConfigurationsRepo, SecretsRepo } from "@svc/core/db"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { ConfigurationId, Limits, type NamespaceId } from "@svc/core/schema"
import { boundSecretIds, insertConfiguration } from "@svc/core/tenancy"
import { Array as Arr, Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages, inNamespace } from "../auth/gatedPage.js"
import { isForeignKeyViolation, namespaceRef, pageOf } from "../iam/access.js"
import { NamespaceGuard, requireExternalNamespaceProvisioned } from "../namespaces/guard.js"
import { secretRef } from "../secrets/policy.js"
import { ModelCredentials } from "../agents/modelCredentials.js"
import { configurationRef } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

const toConfiguration = (row: ConfigurationRow): Configuration => ({
  id: row.id,
  namespaceId: row.namespace_id,
  kind: row.kind,
  generation: row.generation,
  values: row.values,
  secretBindings: row.secret_bindings,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const notFound = () => new NotFound({ message: "The Configuration does not exist." })

/** A Secret deleted between the check and the insert: the foreign key has the last word. */
const secretGone = (error: unknown) =>
  isForeignKeyViolation(error)
    ? Effect.fail(new NotFound({ message: "A bound Secret does not exist in this Namespace." }))
    : Effect.die(error)

export class Configurations extends Effect.Service<Configurations>()("@svc/api/Configurations", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ConfigurationsRepo
    const secrets = yield* SecretsRepo
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const pages = yield* GatedPages
    const modelCredentials = yield* ModelCredentials

    /**
     * The caller's exact `operate` on every bound Secret (SPEC 4.3). A Secret of another Namespace
     * is "not found" in this one, whether or not it exists there. Then, under a key-share lock that
     * a concurrent Secret delete waits for, every bound Secret must exist.
     */
    const admitBindings = exportedFn("Configurations.admitBindings")(function* (namespaceId: NamespaceId, bindings: SecretBindings) {
      for (const [name, binding] of Object.entries(bindings)) {
        if (binding.source.namespaceId !== namespaceId) {
          return yield* new NotFound({ message: `The Secret bound to ${name} does not exist in this Namespace.` })
        }
        yield* authorize("secret:operate", secretRef(namespaceId, binding.source.id))
      }
      const ids = boundSecretIds(bindings)
      if (!Arr.isNonEmptyReadonlyArray(ids)) return
      const present = yield* secrets.lockPresent({ namespace_id: namespaceId, ids })
      const missing = Object.entries(bindings).find(([, binding]) => !present.has(binding.source.id))
      if (missing !== undefined) {
        return yield* new NotFound({ message: `The Secret bound to ${missing[0]} does not exist in this Namespace.` })
      }
    })

    const create = exportedFn("Configurations.create")(function* (
      namespaceId: NamespaceId,
      payload: { readonly kind: "agent"; readonly values: Record<string, unknown>; readonly secretBindings?: SecretBindings }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("configuration:create", namespaceRef(namespaceId))
      const bindings = payload.secretBindings ?? {}
      const id = ConfigurationId.make()
      const insert = Effect.gen(function* () {
        const namespace = yield* namespaces.lockForWrite(namespaceId)
        yield* requireExternalNamespaceProvisioned(namespace)
        yield* admitBindings(namespaceId, bindings)
        // The writer shared with the worker's provisioning runs on the ambient client.
        yield* insertConfiguration({ id, namespaceId, values: payload.values, secretBindings: bindings }, { actorPrincipalId: caller.principalId })
          .pipe(Effect.provideService(SqlClient.SqlClient, sql))
        const row = yield* repo.findLive({ id, namespace_id: namespaceId })
        if (Option.isNone(row)) return yield* Effect.dieMessage("created Configuration vanished")
        return toConfiguration(row.value)
      })
      return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", secretGone))
    })

    const list = exportedFn("Configurations.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "configuration:read", "configuration", { id: "c.id", namespaceId: "c.namespace_id" })
      const rows = yield* pages.page({ ...inNamespace(sql, namespaceId), page: repo.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible) })
      return rows.map(toConfiguration)
    })

    const get = exportedFn("Configurations.get")(function* (namespaceId: NamespaceId, configurationId: ConfigurationId) {
      yield* authorize("configuration:read", configurationRef(namespaceId, configurationId))
      const row = yield* repo.findLive({ id: configurationId, namespace_id: namespaceId })
      return yield* Option.match(row, { onNone: () => Effect.fail(notFound()), onSome: (r) => Effect.succeed(toConfiguration(r)) })
    })

    /**
     * PATCH replaces `values`, and `secretBindings` when given (omitted: kept), and adds one to
     * `generation`. The caller needs `operate` on every Secret bound after the change, kept bindings
     * included: `values` decide where the runtime sends what it is given, so whoever rewrites them
     * must be allowed to use the Secrets delivered beside them, and to aim the model credential of
     * every Agent that takes them (`ModelCredentials`).
     */
    const update = exportedFn("Configurations.update")(function* (
      namespaceId: NamespaceId,
      configurationId: ConfigurationId,
      payload: { readonly values: Record<string, unknown>; readonly secretBindings?: SecretBindings }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("configuration:update", configurationRef(namespaceId, configurationId))
      const write = Effect.gen(function* () {
        yield* namespaces.lockForWrite(namespaceId)
        const current = yield* repo.lockLive({ id: configurationId, namespace_id: namespaceId })
        if (Option.isNone(current)) return yield* notFound()
        if (current.value.generation >= Limits.configurationGeneration) {
          return yield* new ResourceConflict({ message: "The Configuration has reached its maximum generation; create a new one." })
        }
        const bindings = payload.secretBindings ?? current.value.secret_bindings
        yield* admitBindings(namespaceId, bindings)
        yield* modelCredentials.admitValuesChange(namespaceId, configurationId, current.value.values, payload.values)
        const updated = toConfiguration(yield* repo.update({ id: configurationId, values: payload.values, secret_bindings: bindings }))
        if (payload.secretBindings !== undefined) {
          yield* repo.replaceSecretRefs({ configuration_id: configurationId, secret_ids: boundSecretIds(bindings) })
        }
        yield* audit.record({
          kind: "configuration.updated",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "configuration", id: configurationId },
          details: { generation: updated.generation, boundSecretIds: boundSecretIds(bindings) }
        })
        return updated
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", secretGone))
    })

    const remove = exportedFn("Configurations.delete")(function* (namespaceId: NamespaceId, configurationId: ConfigurationId) {
      const caller = yield* CurrentCaller
      yield* authorize("configuration:delete", configurationRef(namespaceId, configurationId))
      const key = { id: configurationId, namespace_id: namespaceId }
      const write = Effect.gen(function* () {
        const row = yield* repo.lockLive(key)
        if (Option.isNone(row)) return yield* notFound()
        const referrer = yield* repo.referrer(key)
        if (referrer !== undefined) {
          return yield* new ResourceConflict({ message: `The Configuration is referenced by ${referrer}; remove the reference first.` })
        }
        yield* repo.remove(configurationId)
        yield* audit.record({
          kind: "configuration.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "configuration", id: configurationId },
          details: { generation: row.value.generation }
        })
      })
      yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { admitBindings, create, list, get, update, delete: remove }
  }),
  dependencies: [
    ConfigurationsRepo.Default,
    SecretsRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    NamespaceGuard.Default,
    GatedPages.Default,
    ModelCredentials.Default
  ]
}) {}
