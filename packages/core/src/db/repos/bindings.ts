/**
 * The `access_bindings` table (DESIGN §6): one Role granted to one principal on one exact
 * resource; with the checks a new binding needs (what its creator holds, net of `restrictions`,
 * and whether the resource it names exists).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { grantHeld, resourceScope, restrictionReaches } from "../../iam/grantPredicate.js"
import { INSTALLATION_RESOURCE_ID, type ResourceRef } from "../../iam/resource.js"
import { BindingId, NamespaceId, RoleId } from "../../schema/ids.js"

export const BindingRow = Schema.Struct({
  id: BindingId,
  namespace_id: NamespaceId,
  /** A human Principal, a service principal or an Agent's principal. */
  principal_id: Schema.String,
  role_id: RoleId,
  resource_kind: Schema.String,
  resource_id: Schema.String,
  created_at: Schema.DateFromSelf
})
export type BindingRow = typeof BindingRow.Type

/** What makes two bindings the same: one per (principal, Role, resource). */
const BindingIdentity = Schema.Struct({
  principal_id: Schema.String,
  role_id: RoleId,
  resource_kind: Schema.String,
  resource_id: Schema.String
})
export type BindingIdentity = typeof BindingIdentity.Type
const InsertBinding = Schema.Struct({ id: BindingId, namespace_id: NamespaceId, ...BindingIdentity.fields })
const BindingKey = Schema.Struct({ id: BindingId, namespace_id: NamespaceId })
const BindingPage = Schema.Struct({
  namespace_id: NamespaceId,
  after: Schema.optional(Schema.String),
  limit: Schema.Int
})

/** The tables of the binding targets whose rows exist today; other kinds are not checked yet. */
const targetTables: Partial<Record<ResourceRef["kind"], string>> = {
  iam_role: "roles",
  iam_access_binding: "access_bindings",
  secret: "secrets",
  preset: "presets",
  configuration: "configurations",
  agent: "agents",
  agent_revision: "agent_revisions",
  // Issue 13: without these a binding in one Namespace could name another's account or source.
  service_account: "service_accounts",
  credential_source: "credential_sources"
}

/**
 * CTEs for a statement that begins `WITH RECURSIVE`: `doomed (id, namespace_id)` is the bindings
 * `seed` selects and, transitively, every binding that names one of them as its exact resource
 * (a binding is itself bindable); `unbound` deletes them all and answers their ids, and the
 * Restrictions on them go too. Without the closure, removing a binding left the bindings on it
 * (and those on these) naming a target that no longer exists.
 */
const removeClosure = (sql: SqlClient.SqlClient, seed: Statement.Fragment) => sql`
  doomed (id, namespace_id) AS (
    ${seed}
    UNION
    SELECT b.id, b.namespace_id FROM access_bindings b JOIN doomed d
      ON b.resource_kind = 'iam_access_binding' AND b.resource_id = d.id AND b.namespace_id = d.namespace_id
  ),
  unbound AS (DELETE FROM access_bindings b USING doomed d WHERE b.id = d.id RETURNING b.id),
  unrestricted_bindings AS (
    DELETE FROM restrictions x USING doomed d WHERE x.resource_kind = 'iam_access_binding' AND x.resource_id = d.id
  )
`

/**
 * `deletion` (a `DELETE ... RETURNING id, namespace_id`, plus whatever its caller reads) as one
 * statement that also deletes the AccessBindings and Restrictions naming a deleted row as their
 * exact resource of `kind`, and the bindings on those bindings (`removeClosure`): the policy on a
 * resource goes with it, whichever path deletes it (SPEC 3 for an Agent; docs/decisions/iam.md
 * for the others). Bindings that only USE a deleted Role are not touched (they keep the Role from
 * being deleted). Answers `deletion`'s rows.
 */
export const deleteWithPolicy = (sql: SqlClient.SqlClient, kind: ResourceRef["kind"], deletion: Statement.Statement<unknown>) => sql`
  WITH RECURSIVE removed AS (${deletion}),
    ${removeClosure(sql, sql`
      SELECT b.id, b.namespace_id FROM access_bindings b JOIN removed r
        ON b.resource_kind = ${kind} AND b.resource_id = r.id AND b.namespace_id = r.namespace_id
    `)},
    unrestricted AS (
      DELETE FROM restrictions x USING removed WHERE x.resource_kind = ${kind} AND x.resource_id = removed.id
    )
  SELECT * FROM removed
`

/**
 * Deletes, in one statement, the AccessBindings `where` selects (a condition over
 * `access_bindings`' own columns), every binding on one of them, transitively, and the
 * Restrictions on all of these. Answers the ids of every binding removed.
 */
export const deleteBindingsWhere = (sql: SqlClient.SqlClient, where: Statement.Fragment) => sql<{ id: string }>`
  WITH RECURSIVE ${removeClosure(sql, sql`SELECT id, namespace_id FROM access_bindings WHERE ${where}`)}
  SELECT id FROM unbound
`

const columns = "id, namespace_id, principal_id, role_id, resource_kind, resource_id, created_at"

export class BindingsRepo extends Effect.Service<BindingsRepo>()("@svc/core/BindingsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Fails with the SqlError a foreign key (23503) gives, for the caller to map. */
    const insert = SqlSchema.single({
      Request: InsertBinding,
      Result: BindingRow,
      execute: (row) => sql`
        INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id)
        VALUES (${row.id}, ${row.principal_id}, ${row.role_id}, ${row.resource_kind}, ${row.resource_id}, ${row.namespace_id})
        RETURNING ${sql.literal(columns)}
      `
    })

    /** A grant on the Installation (bootstrap's); keeps its SqlError for bootstrap to report. */
    const insertOnInstallation = SqlSchema.void({
      Request: Schema.Struct({ id: BindingId, principal_id: Schema.String, role_id: RoleId }),
      execute: (row) => sql`
        INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id)
        VALUES (${row.id}, ${row.principal_id}, ${row.role_id}, 'installation', ${INSTALLATION_RESOURCE_ID}, NULL)
      `
    })

    /** Whether the principal holds the Role on the Installation itself. */
    const heldOnInstallation = SqlSchema.findOne({
      Request: Schema.Struct({ principal_id: Schema.String, role_id: Schema.String }),
      Result: Schema.Struct({ id: BindingId }),
      execute: (key) => sql`
        SELECT id FROM access_bindings
        WHERE principal_id = ${key.principal_id} AND role_id = ${key.role_id} AND resource_kind = 'installation'
      `
    })

    const find = SqlSchema.findOne({
      Request: BindingKey,
      Result: BindingRow,
      execute: (key) => sql`
        SELECT ${sql.literal(columns)} FROM access_bindings WHERE id = ${key.id} AND namespace_id = ${key.namespace_id}
      `
    })

    /** One keyset page of a Namespace's bindings, filtered by `visible` (over `b.id` / `b.namespace_id`). */
    const page = (req: typeof BindingPage.Type, visible: Statement.Fragment): PageQuery<typeof BindingRow.Type> =>
      pageQuery(BindingRow, sql`
          SELECT b.id, b.namespace_id, b.principal_id, b.role_id, b.resource_kind, b.resource_id, b.created_at
          FROM access_bindings b
          WHERE b.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "b.id", req.after)}
            AND ${visible}
          ORDER BY b.id
          LIMIT ${req.limit}
        `)

    const removeLocked = SqlSchema.findOne({
      Request: BindingKey,
      Result: Schema.Struct({ principal_id: Schema.String, role_id: RoleId }),
      execute: (key) => deleteWithPolicy(sql, "iam_access_binding", sql`
        DELETE FROM access_bindings WHERE id = ${key.id} AND namespace_id = ${key.namespace_id}
        RETURNING id, namespace_id, principal_id, role_id
      `)
    })

    /**
     * Locks the binding by a statement of its own before the deletion: a binding created on this
     * one meanwhile (its target check locks this row FOR KEY SHARE) has then committed before
     * the deletion's snapshot, so the closure removes it too. Call inside a transaction.
     */
    const remove = (key: typeof BindingKey.Type) =>
      Effect.zipRight(sql`SELECT 1 FROM access_bindings WHERE id = ${key.id} AND namespace_id = ${key.namespace_id} FOR UPDATE`, removeLocked(key))

    const identical = SqlSchema.findOne({
      Request: BindingIdentity,
      Result: Schema.Struct({ id: BindingId }),
      execute: (b) => sql`
        SELECT id FROM access_bindings
        WHERE principal_id = ${b.principal_id} AND role_id = ${b.role_id}
          AND resource_kind = ${b.resource_kind} AND resource_id = ${b.resource_id}
      `
    })

    const anyForRole = SqlSchema.findOne({
      Request: RoleId,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (roleId) => sql`SELECT id FROM access_bindings WHERE role_id = ${roleId} LIMIT 1`
    })

    const removeForPrincipal = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (principalId) => deleteBindingsWhere(sql, sql`principal_id = ${principalId}`)
    })

    /**
     * The permissions of `permissions` the principal does not hold on the resource (a grant that
     * covers it, and no Restriction; the predicate of `decide`): one query, whatever the size of
     * the Role.
     */
    const missingPermissions = (principalId: string, permissions: ReadonlyArray<string>, target: ResourceRef) => {
      const principal = sql`${principalId}`
      const held = sql`p.permission`
      const scope = resourceScope(sql, target)
      return SqlSchema.findAll({
        Request: Schema.Array(Schema.String),
        Result: Schema.Struct({ permission: Schema.String }),
        execute: (wanted) => sql`
          SELECT p.permission FROM unnest(string_to_array(${wanted.join(",")}, ',')) AS p (permission)
          WHERE NOT ${grantHeld(sql, principal, held, scope)}
            OR ${restrictionReaches(sql, principal, held, scope)}
        `
      })(permissions).pipe(Effect.map((rows) => rows.map((row) => row.permission)), Effect.orDie)
    }

    /**
     * Whether the target of a binding exists in its Namespace (kinds without a table yet:
     * assumed), its row then locked FOR KEY SHARE for the rest of the transaction.
     */
    const targetExists = (target: ResourceRef) => {
      const table = targetTables[target.kind]
      if (table === undefined || target.kind === "installation" || target.kind === "namespace") return Effect.succeed(true)
      // FOR KEY SHARE until the binding commits: a deletion of the target (which locks its row
      // first, then removes the bindings on it) waits and then sees this binding; a deletion
      // that came first leaves no row here (404), never a binding naming a deleted resource.
      return sql`SELECT 1 FROM ${sql(table)} WHERE id = ${target.id} AND namespace_id = ${target.namespaceId} FOR KEY SHARE`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )
    }

    /**
     * Serialises concurrent requests for the same binding until the transaction ends, so the
     * `exists` check that follows sees the winner's row.
     */
    const lockIdentity = (b: BindingIdentity) =>
      sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${b.principal_id}|${b.role_id}|${b.resource_kind}|${b.resource_id}`}, 0))`
        .pipe(Effect.asVoid, Effect.orDie)

    return {
      insert,
      insertOnInstallation,
      holdsOnInstallation: (key: { readonly principal_id: string; readonly role_id: string }) =>
        heldOnInstallation(key).pipe(Effect.map(Option.isSome), Effect.catchTag("ParseError", Effect.die)),
      find: (key: typeof BindingKey.Type) => find(key).pipe(Effect.orDie),
      page,
      /** The principal and Role of the removed binding; None when there was none. */
      remove: (key: typeof BindingKey.Type) => remove(key).pipe(Effect.orDie),
      lockIdentity,
      exists: (identity: BindingIdentity) => identical(identity).pipe(Effect.map(Option.isSome), Effect.orDie),
      missingPermissions,
      targetExists,
      /** Whether any AccessBinding grants the Role (a referenced Role cannot be deleted). */
      isRoleReferenced: (roleId: RoleId) => anyForRole(roleId).pipe(Effect.map(Option.isSome), Effect.orDie),
      /** Removes every AccessBinding of a principal, and those on them; how many there were. */
      removeForPrincipal: (principalId: string) =>
        removeForPrincipal(principalId).pipe(Effect.map((rows) => rows.length), Effect.orDie)
    }
  })
}) {}
