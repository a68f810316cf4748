/**
 * Namespace Roles (DESIGN §6): immutable sets of Namespace-level permissions. A Namespace lists
 * its own custom Roles and the built-in Namespace Roles (which every Namespace may bind).
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { type Caller, CurrentCaller, visibleTo } from "@svc/core/iam"
import { type NamespaceId, RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import {
  authorizeNamespaceAdministration,
  builtinNamespaceRoleIds,
  builtinRoleNames,
  isUniqueViolation,
  namespaceRef,
  type Page,
  requireNamespace
} from "./access.js"
import type { Role } from "@svc/core/api"

interface RoleRow {
  readonly id: string
  readonly namespace_id: string | null
  readonly name: string
  readonly permissions: ReadonlyArray<string>
  readonly builtin: boolean
  readonly created_at: Date
}

const toRole = (row: RoleRow): Role => ({
  id: row.id as Role["id"],
  namespaceId: row.namespace_id as NamespaceId | null,
  name: row.name,
  permissions: row.permissions,
  builtin: row.builtin,
  createdAt: row.created_at
})

export const roleRef = (namespaceId: string, roleId: string) =>
  ({ kind: "iam_role", id: roleId, namespaceId }) as const

/** The Roles bindable in a Namespace: its own, and the built-in Namespace Roles. */
const bindableIn = (sql: SqlClient.SqlClient, namespaceId: string) =>
  sql`(r.namespace_id = ${namespaceId} OR (r.builtin AND r.id IN ${sql.in(builtinNamespaceRoleIds)}))`

/** One Role bindable in the Namespace, optionally locked for the rest of the transaction. */
export const findBindableRole = (namespaceId: string, roleId: string, lock: "none" | "share" | "update" = "none") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const locking = lock === "update" ? sql`FOR UPDATE` : lock === "share" ? sql`FOR SHARE` : sql``
    const rows = yield* sql<RoleRow>`
      SELECT r.id, r.namespace_id, r.name, r.permissions, r.builtin, r.created_at
      FROM roles r WHERE r.id = ${roleId} AND ${bindableIn(sql, namespaceId)}
      ${locking}
    `
    return rows[0]
  })

const notFound = () => new NotFound({ message: "The Role does not exist." })

export const createRole = Effect.fn("IamRoles.create")(function* (
  namespaceId: string,
  payload: { readonly name: string; readonly permissions: ReadonlyArray<string> }
) {
  const caller = yield* CurrentCaller
  yield* authorize("iam_role:create", namespaceRef(namespaceId))
  yield* requireNamespace(namespaceId)
  if (builtinRoleNames.has(payload.name)) {
    return yield* new ResourceConflict({ message: "A built-in Role already has this name." })
  }
  const sql = yield* SqlClient.SqlClient
  const permissions = [...new Set(payload.permissions)]
  const id = RoleId.make()
  const insert = Effect.gen(function* () {
    const rows = yield* sql<RoleRow>`
      INSERT INTO roles (id, namespace_id, name, permissions, builtin)
      VALUES (${id}, ${namespaceId}, ${payload.name}, string_to_array(${permissions.join(",")}, ','), false)
      RETURNING id, namespace_id, name, permissions, builtin, created_at
    `
    yield* recordAudit({
      kind: "iam.role.created",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "iam_role", id },
      details: { permissions }
    })
    return toRole(rows[0]!)
  })
  return yield* sql.withTransaction(insert).pipe(
    Effect.catchTag("SqlError", (error) =>
      isUniqueViolation(error)
        ? Effect.fail(new ResourceConflict({ message: "A Role with this name already exists in the Namespace." }))
        : Effect.die(error)
    )
  )
})

export const listRoles = Effect.fn("IamRoles.list")(function* (namespaceId: string, page: Page) {
  const caller: Caller = yield* CurrentCaller
  yield* authorizeNamespaceAdministration(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<RoleRow>`
    SELECT r.id, r.namespace_id, r.name, r.permissions, r.builtin, r.created_at
    FROM roles r CROSS JOIN (SELECT ${namespaceId}::text AS ns) scope
    WHERE ${bindableIn(sql, namespaceId)}
      AND ${page.after === undefined ? sql`TRUE` : sql`r.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "iam_role:read", "iam_role", { id: "r.id", namespaceId: "scope.ns" })}
    ORDER BY r.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toRole)
})

export const getRole = Effect.fn("IamRoles.get")(function* (namespaceId: string, roleId: string) {
  yield* authorize("iam_role:read", roleRef(namespaceId, roleId))
  yield* requireNamespace(namespaceId)
  const row = yield* findBindableRole(namespaceId, roleId).pipe(Effect.orDie)
  if (row === undefined) return yield* notFound()
  return toRole(row)
})

export const deleteRole = Effect.fn("IamRoles.delete")(function* (namespaceId: string, roleId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("iam_role:delete", roleRef(namespaceId, roleId))
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const remove = Effect.gen(function* () {
    // The row lock orders this delete against a concurrent binding (whose foreign key check
    // takes a share lock on the Role): one of them sees the other's outcome.
    const row = yield* findBindableRole(namespaceId, roleId, "update").pipe(Effect.orDie)
    if (row === undefined) return yield* notFound()
    if (row.builtin) return yield* new ResourceConflict({ message: "Built-in Roles cannot be deleted." })
    const referenced = yield* sql`SELECT 1 FROM access_bindings WHERE role_id = ${roleId} LIMIT 1`.pipe(Effect.orDie)
    if (referenced.length > 0) {
      return yield* new ResourceConflict({ message: "The Role is referenced by an AccessBinding; remove the bindings first." })
    }
    yield* sql`DELETE FROM roles WHERE id = ${roleId}`.pipe(Effect.orDie)
    yield* recordAudit({
      kind: "iam.role.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "iam_role", id: roleId }
    }).pipe(Effect.orDie)
  })
  yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})
