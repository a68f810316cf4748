/**
 * Namespaces (SPEC 3, 4.2): creation queues provisioning, deletion queues teardown; the worker's
 * reconcilers move the status on (`ready`, `failed`, `deleted`). A deleted Namespace is a
 * tombstone: 404 here and absent from lists.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { InstallationConfiguration } from "@svc/core/config"
import { supportsExistingNamespace } from "@svc/core/drivers/compute"
import { NamespaceNotEmpty, NotFound, ResourceConflict } from "@svc/core/errors"
import { type Caller, CurrentCaller, Installation, visibleTo } from "@svc/core/iam"
import type { NamespaceId } from "@svc/core/schema"
import { createNamespace as insertNamespace, NAMESPACE_TEARDOWN, WorkOutbox } from "@svc/core/tenancy"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import { namespaceRef, type Page } from "../iam/access.js"
import type { Namespace } from "@svc/core/api"

interface NamespaceRow {
  readonly id: string
  readonly name: string
  readonly status: Namespace["status"]
  readonly existing_namespace: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const toNamespace = (row: NamespaceRow): Namespace => ({
  id: row.id as NamespaceId,
  name: row.name,
  status: row.status,
  ...(row.existing_namespace === null ? {} : { existingNamespace: row.existing_namespace }),
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const notFound = () => new NotFound({ message: "The Namespace does not exist." })

const columns = (sql: SqlClient.SqlClient) =>
  sql`n.id, n.name, n.status, n.existing_namespace, n.created_at, n.updated_at`

const findLive = (id: string, lock: boolean) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<NamespaceRow>`
      SELECT ${columns(sql)} FROM namespaces n WHERE n.id = ${id} AND n.status <> 'deleted'
      ${lock ? sql`FOR UPDATE` : sql``}
    `.pipe(Effect.orDie)
    return rows[0]
  })

export const createNamespace = Effect.fn("Namespaces.create")(function* (payload: {
  readonly name: string
  readonly existingNamespace?: string | undefined
}) {
  const caller = yield* CurrentCaller
  yield* authorize("namespace:create", Installation)
  if (payload.existingNamespace !== undefined) {
    yield* authorize("installation:administer", Installation)
    const installation = yield* InstallationConfiguration
    if (!supportsExistingNamespace(installation.drivers.compute)) {
      return yield* new ResourceConflict({
        message: `The ${installation.drivers.compute.id} Compute Driver cannot bind an existingNamespace.`
      })
    }
  }
  const sql = yield* SqlClient.SqlClient
  const create = Effect.gen(function* () {
    const created = yield* insertNamespace(payload)
    yield* recordAudit({
      kind: "namespace.created",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId: created.id,
      resource: { kind: "namespace", id: created.id },
      details: { name: created.name, ...(created.existingNamespace === undefined ? {} : { existingNamespace: created.existingNamespace }) }
    })
    return created.id
  })
  const id = yield* sql.withTransaction(create).pipe(
    Effect.catchTags({
      NamespaceNameTaken: () => Effect.fail(new ResourceConflict({ message: "A Namespace with this name already exists." })),
      SqlError: Effect.die
    })
  )
  const row = yield* findLive(id, false)
  if (row === undefined) return yield* Effect.dieMessage("created Namespace vanished")
  return toNamespace(row)
})

export const listNamespaces = Effect.fn("Namespaces.list")(function* (page: Page) {
  const caller: Caller = yield* CurrentCaller
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<NamespaceRow>`
    SELECT ${columns(sql)} FROM namespaces n
    WHERE n.status <> 'deleted'
      AND ${page.after === undefined ? sql`TRUE` : sql`n.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "namespace:read", "namespace", { id: "n.id", namespaceId: "n.id" })}
    ORDER BY n.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toNamespace)
})

export const getNamespace = Effect.fn("Namespaces.get")(function* (namespaceId: string) {
  yield* authorize("namespace:read", namespaceRef(namespaceId))
  const row = yield* findLive(namespaceId, false)
  if (row === undefined) return yield* notFound()
  return toNamespace(row)
})

/**
 * What keeps a Namespace from being deleted (SPEC 4.2 409 `NAMESPACE_NOT_EMPTY`): today, its
 * Namespace-scoped service principals (automation identities that hold keys), Secrets,
 * Configurations, Presets and Agents (a `deleting` one included). Custom Roles and AccessBindings are the
 * Namespace's own policy and do not block. Capabilities add their tables (service accounts,
 * credential sources) here. Writers lock the Namespace row FOR SHARE (`children.ts`), so none slips past this count.
 */
const holdsResources = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      SELECT 1 FROM principals WHERE namespace_id = ${namespaceId} AND kind = 'service'
      UNION ALL SELECT 1 FROM secrets WHERE namespace_id = ${namespaceId}
      UNION ALL SELECT 1 FROM configurations WHERE namespace_id = ${namespaceId}
      UNION ALL SELECT 1 FROM agents WHERE namespace_id = ${namespaceId}
      UNION ALL SELECT 1 FROM presets WHERE namespace_id = ${namespaceId}
      LIMIT 1
    `.pipe(Effect.orDie)
    return rows.length > 0
  })

export const deleteNamespace = Effect.fn("Namespaces.delete")(function* (namespaceId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("namespace:delete", namespaceRef(namespaceId))
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* WorkOutbox
  const remove = Effect.gen(function* () {
    // The row lock orders this against the reconcilers (which hold it across the driver call).
    const row = yield* findLive(namespaceId, true)
    if (row === undefined) return yield* notFound()
    // Already being deleted: a repeat changes nothing.
    if (row.status === "deleting") return toNamespace(row)
    if (yield* holdsResources(namespaceId)) {
      return yield* new NamespaceNotEmpty({ message: "The Namespace still holds resources; delete them first." })
    }
    const updated = yield* sql<NamespaceRow>`
      UPDATE namespaces n SET status = 'deleting', updated_at = now() WHERE n.id = ${namespaceId}
      RETURNING ${columns(sql)}
    `.pipe(Effect.orDie)
    yield* outbox.enqueue({ kind: NAMESPACE_TEARDOWN, key: namespaceId, payload: { namespaceId } }).pipe(Effect.orDie)
    yield* recordAudit({
      kind: "namespace.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "namespace", id: namespaceId }
    }).pipe(Effect.orDie)
    return toNamespace(updated[0]!)
  })
  return yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})
