/**
 * The `roles` table (DESIGN §6): immutable sets of permissions. A Namespace may bind its own
 * custom Roles and the built-in Namespace Roles; rows are decoded with their schema, so no
 * caller casts.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { BuiltinRoles } from "../../iam/builtinRoles.js"
import { NamespaceId, RoleId } from "../../schema/ids.js"
import { deleteWithPolicy } from "./bindings.js"

export const RoleRow = Schema.Struct({
  id: RoleId,
  /** null for a built-in Role (Installation-owned, bindable in every Namespace). */
  namespace_id: Schema.NullOr(NamespaceId),
  name: Schema.String,
  permissions: Schema.Array(Schema.String),
  builtin: Schema.Boolean,
  created_at: Schema.DateFromSelf
})
export type RoleRow = typeof RoleRow.Type

/** The ids of the built-in Roles that may be bound inside a Namespace (not installation-admin). */
const builtinNamespaceRoleIds: ReadonlyArray<string> = Object.values(BuiltinRoles)
  .filter((role) => role.scope === "namespace")
  .map((role) => role.id)

const InsertRole = Schema.Struct({
  id: RoleId,
  namespace_id: NamespaceId,
  name: Schema.String,
  permissions: Schema.Array(Schema.String)
})
const BindableRoleKey = Schema.Struct({ id: RoleId, namespace_id: NamespaceId })
const RolePage = Schema.Struct({
  namespace_id: NamespaceId,
  after: Schema.optional(Schema.String),
  limit: Schema.Int
})

/** `none`: a plain read; `share`: against a concurrent delete; `update`: the delete itself. */
export type RoleLock = "none" | "share" | "update"

export class RolesRepo extends Effect.Service<RolesRepo>()("@svc/core/RolesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The Roles bindable in a Namespace: its own, and the built-in Namespace Roles. */
    const bindableIn = (namespaceId: string) =>
      sql`(r.namespace_id = ${namespaceId} OR (r.builtin AND r.id IN ${sql.in(builtinNamespaceRoleIds)}))`

    /** Fails with the SqlError a unique name (23505) gives, for the caller to map. */
    const insert = SqlSchema.single({
      Request: InsertRole,
      Result: RoleRow,
      execute: (row) => sql`
        INSERT INTO roles (id, namespace_id, name, permissions, builtin)
        VALUES (${row.id}, ${row.namespace_id}, ${row.name}, string_to_array(${row.permissions.join(",")}, ','), false)
        RETURNING id, namespace_id, name, permissions, builtin, created_at
      `
    })

    /** One Role bindable in the Namespace, optionally locked for the rest of the transaction. */
    const findBindable = (key: typeof BindableRoleKey.Type, lock: RoleLock = "none") =>
      SqlSchema.findOne({
        Request: BindableRoleKey,
        Result: RoleRow,
        execute: (k) => sql`
          SELECT r.id, r.namespace_id, r.name, r.permissions, r.builtin, r.created_at
          FROM roles r WHERE r.id = ${k.id} AND ${bindableIn(k.namespace_id)}
          ${lock === "update" ? sql`FOR UPDATE` : lock === "share" ? sql`FOR SHARE` : sql``}
        `
      })(key).pipe(Effect.orDie)

    /**
     * One keyset page of the Roles bindable in a Namespace, filtered by `visible` (the caller's
     * `visibleTo` fragment over `r.id` / `scope.ns`: a built-in Role is seen as the Namespace's).
     */
    const page = (req: typeof RolePage.Type, visible: Statement.Fragment): PageQuery<typeof RoleRow.Type> =>
      pageQuery(RoleRow, sql`
          SELECT r.id, r.namespace_id, r.name, r.permissions, r.builtin, r.created_at
          FROM roles r CROSS JOIN (SELECT ${req.namespace_id}::text AS ns) scope
          WHERE ${bindableIn(req.namespace_id)}
            AND ${afterCursor(sql, "r.id", req.after)}
            AND ${visible}
          ORDER BY r.id
          LIMIT ${req.limit}
        `)

    /** An Installation-scoped Role (built-in or not), by id. */
    const findInstallationRole = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: RoleId }),
      execute: (id) => sql`SELECT id FROM roles WHERE id = ${id} AND namespace_id IS NULL`
    })

    const remove = SqlSchema.void({
      Request: RoleId,
      execute: (id) => deleteWithPolicy(sql, "iam_role", sql`DELETE FROM roles WHERE id = ${id} RETURNING id, namespace_id`)
    })

    return {
      insert,
      findBindable,
      findInstallationRole: (id: string) => findInstallationRole(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      page,
      remove: (id: RoleId) => remove(id).pipe(Effect.orDie)
    }
  })
}) {}
