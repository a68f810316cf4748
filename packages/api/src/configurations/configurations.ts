/**
 * Configurations (SPEC 2.8, 4.3). Saving one queues no work and never touches a revision: a
 * deployment snapshots the Configuration it finds (the agents capability). Each bound Secret
 * needs the caller's exact `operate`, and the database refuses to delete a bound Secret.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { ConfigurationId, Limits, type NamespaceId } from "@svc/core/schema"
import { boundSecretIds, insertConfiguration, writeConfigurationSecretRefs } from "@svc/core/tenancy"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import { isForeignKeyViolation, namespaceRef, type Page, requireNamespace } from "../iam/access.js"
import { lockNamespaceForWrite, requireExternalNamespaceProvisioned } from "../namespaces/children.js"
import { secretRef } from "../secrets/policy.js"
import type { Configuration, SecretBindings } from "@svc/core/api"

interface ConfigurationRow {
  readonly id: string
  readonly namespace_id: string
  readonly kind: "agent"
  readonly generation: string | number
  readonly values: Record<string, unknown>
  readonly secret_bindings: SecretBindings
  readonly created_at: Date
  readonly updated_at: Date
}

const COLUMNS = `c.id, c.namespace_id, c.kind, c.generation, c."values", c.secret_bindings, c.created_at, c.updated_at`

const toConfiguration = (row: ConfigurationRow): Configuration => ({
  id: row.id as ConfigurationId,
  namespaceId: row.namespace_id as NamespaceId,
  kind: row.kind,
  // bigint arrives as a string; the column's CHECK keeps it within 2^53 - 1.
  generation: Number(row.generation),
  values: row.values,
  secretBindings: row.secret_bindings,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export const configurationRef = (namespaceId: string, configurationId: string) =>
  ({ kind: "configuration", id: configurationId, namespaceId }) as const

const notFound = () => new NotFound({ message: "The Configuration does not exist." })

/**
 * The caller's exact `operate` on every bound Secret (SPEC 4.3). A Secret of another Namespace
 * is "not found" in this one, whether or not it exists there. Then, under a key-share lock that
 * a concurrent Secret delete waits for, every bound Secret must exist.
 */
export const admitBindings = (namespaceId: string, bindings: SecretBindings) =>
  Effect.gen(function* () {
    for (const [name, binding] of Object.entries(bindings)) {
      if (binding.source.namespaceId !== namespaceId) {
        return yield* new NotFound({ message: `The Secret bound to ${name} does not exist in this Namespace.` })
      }
      yield* authorize("secret:operate", secretRef(namespaceId, binding.source.id))
    }
    const ids = boundSecretIds(bindings)
    if (ids.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const found = yield* sql<{ id: string }>`
      SELECT id FROM secrets WHERE namespace_id = ${namespaceId} AND id IN ${sql.in(ids)} FOR KEY SHARE
    `.pipe(Effect.orDie)
    const present = new Set(found.map((row) => row.id))
    const missing = Object.entries(bindings).find(([, binding]) => !present.has(binding.source.id))
    if (missing !== undefined) {
      return yield* new NotFound({ message: `The Secret bound to ${missing[0]} does not exist in this Namespace.` })
    }
  })

/** A Secret deleted between the check and the insert: the foreign key has the last word. */
const secretGone = (error: unknown) =>
  isForeignKeyViolation(error)
    ? Effect.fail(new NotFound({ message: "A bound Secret does not exist in this Namespace." }))
    : Effect.die(error)

const findConfiguration = (namespaceId: string, configurationId: string, lock: boolean) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<ConfigurationRow>`
      SELECT ${sql.unsafe(COLUMNS)}
      FROM configurations c JOIN namespaces n ON n.id = c.namespace_id
      WHERE c.id = ${configurationId} AND c.namespace_id = ${namespaceId} AND n.status <> 'deleted'
      ${lock ? sql`FOR UPDATE OF c` : sql``}
    `.pipe(Effect.orDie)
    return rows[0]
  })

export const createConfiguration = Effect.fn("Configurations.create")(function* (
  namespaceId: string,
  payload: { readonly kind: "agent"; readonly values: Record<string, unknown>; readonly secretBindings?: SecretBindings }
) {
  const caller = yield* CurrentCaller
  yield* authorize("configuration:create", namespaceRef(namespaceId))
  const bindings = payload.secretBindings ?? {}
  const sql = yield* SqlClient.SqlClient
  const id = ConfigurationId.make()
  const insert = Effect.gen(function* () {
    const namespace = yield* lockNamespaceForWrite(namespaceId)
    yield* requireExternalNamespaceProvisioned(namespace)
    yield* admitBindings(namespaceId, bindings)
    yield* insertConfiguration({ id, namespaceId, values: payload.values, secretBindings: bindings }, { actorPrincipalId: caller.principalId })
    const row = yield* findConfiguration(namespaceId, id, false)
    return toConfiguration(row!)
  })
  return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", secretGone))
})

export const listConfigurations = Effect.fn("Configurations.list")(function* (namespaceId: string, page: Page) {
  const caller = yield* CurrentCaller
  yield* authorize("namespace:read", namespaceRef(namespaceId))
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<ConfigurationRow>`
    SELECT ${sql.unsafe(COLUMNS)}
    FROM configurations c
    WHERE c.namespace_id = ${namespaceId}
      AND ${page.after === undefined ? sql`TRUE` : sql`c.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "configuration:read", "configuration", { id: "c.id", namespaceId: "c.namespace_id" })}
    ORDER BY c.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toConfiguration)
})

export const getConfiguration = Effect.fn("Configurations.get")(function* (namespaceId: string, configurationId: string) {
  yield* authorize("configuration:read", configurationRef(namespaceId, configurationId))
  const row = yield* findConfiguration(namespaceId, configurationId, false)
  if (row === undefined) return yield* notFound()
  return toConfiguration(row)
})

/**
 * PATCH replaces `values`, and `secretBindings` when given (omitted: kept), and adds one to
 * `generation`. The caller needs `operate` on every Secret bound after the change, kept bindings
 * included: `values` decide where the runtime sends what it is given, so whoever rewrites them
 * must be allowed to use the Secrets delivered beside them.
 */
export const updateConfiguration = Effect.fn("Configurations.update")(function* (
  namespaceId: string,
  configurationId: string,
  payload: { readonly values: Record<string, unknown>; readonly secretBindings?: SecretBindings }
) {
  const caller = yield* CurrentCaller
  yield* authorize("configuration:update", configurationRef(namespaceId, configurationId))
  const sql = yield* SqlClient.SqlClient
  const update = Effect.gen(function* () {
    yield* lockNamespaceForWrite(namespaceId)
    const current = yield* findConfiguration(namespaceId, configurationId, true)
    if (current === undefined) return yield* notFound()
    if (Number(current.generation) >= Limits.configurationGeneration) {
      return yield* new ResourceConflict({ message: "The Configuration has reached its maximum generation; create a new one." })
    }
    const bindings = payload.secretBindings ?? current.secret_bindings
    yield* admitBindings(namespaceId, bindings)
    const rows = yield* sql<ConfigurationRow>`
      UPDATE configurations AS c
      SET "values" = ${JSON.stringify(payload.values)}::jsonb, secret_bindings = ${JSON.stringify(bindings)}::jsonb,
        generation = c.generation + 1, updated_at = now()
      WHERE c.id = ${configurationId}
      RETURNING ${sql.unsafe(COLUMNS)}
    `
    if (payload.secretBindings !== undefined) yield* writeConfigurationSecretRefs(configurationId, bindings)
    const updated = toConfiguration(rows[0]!)
    yield* recordAudit({
      kind: "configuration.updated",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "configuration", id: configurationId },
      details: { generation: updated.generation, boundSecretIds: boundSecretIds(bindings) }
    })
    return updated
  })
  return yield* sql.withTransaction(update).pipe(Effect.catchTag("SqlError", secretGone))
})

/**
 * What still references the Configuration, or undefined (DELETE answers 409 while something
 * does): an Agent's draft, or a revision (a revision snapshots the Configuration it ran and keeps
 * naming it). Runs inside the deleting transaction after the row lock.
 */
export const configurationReferrer = (
  namespaceId: string,
  configurationId: string
): Effect.Effect<string | undefined, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ referrer: string }>`
      SELECT 'Agent ' || id AS referrer FROM agents WHERE configuration_id = ${configurationId} AND namespace_id = ${namespaceId}
      UNION ALL
      SELECT 'revision ' || id FROM agent_revisions WHERE configuration_id = ${configurationId} AND namespace_id = ${namespaceId}
      LIMIT 1
    `.pipe(Effect.orDie)
    return rows[0]?.referrer
  })

export const deleteConfiguration = Effect.fn("Configurations.delete")(function* (namespaceId: string, configurationId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("configuration:delete", configurationRef(namespaceId, configurationId))
  const sql = yield* SqlClient.SqlClient
  const remove = Effect.gen(function* () {
    const row = yield* findConfiguration(namespaceId, configurationId, true)
    if (row === undefined) return yield* notFound()
    const referrer = yield* configurationReferrer(namespaceId, configurationId)
    if (referrer !== undefined) {
      return yield* new ResourceConflict({ message: `The Configuration is referenced by ${referrer}; remove the reference first.` })
    }
    yield* sql`DELETE FROM configurations WHERE id = ${configurationId}`
    yield* recordAudit({
      kind: "configuration.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "configuration", id: configurationId },
      details: { generation: Number(row.generation) }
    })
  })
  yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})
