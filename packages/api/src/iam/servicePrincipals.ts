/**
 * Service principals for automation (DESIGN §6, beyond SPEC): Installation-scoped or scoped to
 * one Namespace. Managing them needs `administer` on the Installation (keys for them need it too,
 * SPEC 5.5); the Namespace-scoped ones also need `read` on their Namespace.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { NotFound } from "@svc/core/errors"
import { CurrentCaller, Installation } from "@svc/core/iam"
import { type NamespaceId, ServicePrincipalId } from "@svc/core/schema"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import { authorizeNamespaceAdministration, type Page } from "./access.js"
import type { ServicePrincipal } from "@svc/core/api"

interface PrincipalRow {
  readonly id: string
  readonly name: string
  readonly namespace_id: string | null
  readonly created_at: Date
}

const toServicePrincipal = (row: PrincipalRow): ServicePrincipal => ({
  id: row.id as ServicePrincipal["id"],
  name: row.name,
  ...(row.namespace_id === null ? {} : { namespaceId: row.namespace_id as NamespaceId }),
  createdAt: row.created_at
})

/** null: Installation scope. */
type Scope = string | null

const authorizeScope = (scope: Scope) =>
  scope === null ? authorize("installation:administer", Installation) : authorizeNamespaceAdministration(scope)

const notFound = () => new NotFound({ message: "The service principal does not exist." })

const inScope = (sql: SqlClient.SqlClient, scope: Scope) =>
  scope === null ? sql`namespace_id IS NULL` : sql`namespace_id = ${scope}`

export const createServicePrincipal = Effect.fn("ServicePrincipals.create")(function* (scope: Scope, name: string) {
  const caller = yield* CurrentCaller
  yield* authorizeScope(scope)
  const sql = yield* SqlClient.SqlClient
  const id = ServicePrincipalId.make()
  const create = Effect.gen(function* () {
    const rows = yield* sql<PrincipalRow>`
      INSERT INTO principals (id, kind, namespace_id, name) VALUES (${id}, 'service', ${scope}, ${name})
      RETURNING id, name, namespace_id, created_at
    `
    yield* recordAudit({
      kind: "iam.service-principal.created",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId: scope,
      resource: { kind: "service_principal", id }
    })
    return toServicePrincipal(rows[0]!)
  })
  return yield* sql.withTransaction(create).pipe(Effect.orDie)
})

export const listServicePrincipals = Effect.fn("ServicePrincipals.list")(function* (scope: Scope, page: Page) {
  yield* authorizeScope(scope)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<PrincipalRow>`
    SELECT id, name, namespace_id, created_at FROM principals
    WHERE kind = 'service' AND deleted_at IS NULL AND ${inScope(sql, scope)}
      AND ${page.after === undefined ? sql`TRUE` : sql`id > ${page.after}`}
    ORDER BY id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toServicePrincipal)
})

export const getServicePrincipal = Effect.fn("ServicePrincipals.get")(function* (scope: Scope, id: string) {
  yield* authorizeScope(scope)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<PrincipalRow>`
    SELECT id, name, namespace_id, created_at FROM principals
    WHERE id = ${id} AND kind = 'service' AND deleted_at IS NULL AND ${inScope(sql, scope)}
  `.pipe(Effect.orDie)
  if (rows[0] === undefined) return yield* notFound()
  return toServicePrincipal(rows[0])
})

/**
 * Marks the principal deleted (its keys stop working at once: authentication requires a live
 * principal) and removes its AccessBindings, in one transaction with the audit record.
 */
export const deleteServicePrincipal = Effect.fn("ServicePrincipals.delete")(function* (scope: Scope, id: string) {
  const caller = yield* CurrentCaller
  yield* authorizeScope(scope)
  const sql = yield* SqlClient.SqlClient
  const remove = Effect.gen(function* () {
    const rows = yield* sql`
      UPDATE principals SET deleted_at = now()
      WHERE id = ${id} AND kind = 'service' AND deleted_at IS NULL AND ${inScope(sql, scope)}
      RETURNING id
    `.pipe(Effect.orDie)
    if (rows.length === 0) return yield* notFound()
    const removed = yield* sql`DELETE FROM access_bindings WHERE principal_id = ${id} RETURNING id`.pipe(Effect.orDie)
    yield* recordAudit({
      kind: "iam.service-principal.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId: scope,
      resource: { kind: "service_principal", id },
      details: { removedBindings: removed.length }
    }).pipe(Effect.orDie)
  })
  yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})
