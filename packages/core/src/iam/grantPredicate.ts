import type { SqlClient, Statement } from "@effect/sql"
import { INSTALLATION_RESOURCE_ID, namespaceOf, type ResourceRef } from "./resource.js"

/**
 * The one grant predicate of the service (DESIGN §6), as SQL fragments, so that `decide`,
 * `visibleTo` and grant coverage (key issuance, account management) cannot drift apart:
 * `decide` and `visibleTo` ask it about one resource, grant coverage about a whole binding
 * scope. Each side of a comparison is a fragment: a bound value or a column.
 *
 * The subqueries name their tables `iam_b`, `iam_r` and `iam_x`, names no caller uses, so a
 * column of the caller's query (`b.id`, `r.id`) is never captured by an inner alias.
 */

/** A scope in SQL: a binding's, a Restriction's or a resource's kind, id and Namespace id. */
export interface Scope {
  readonly kind: Statement.Fragment
  readonly id: Statement.Fragment
  /** The Namespace the scope is in (itself for a Namespace); NULL for the Installation. */
  readonly namespaceId: Statement.Fragment
}

/** The scope of one exact resource, as bound values. */
export const resourceScope = (sql: SqlClient.SqlClient, resource: ResourceRef): Scope => ({
  kind: sql`${resource.kind}::text`,
  id: sql`${resource.kind === "installation" ? INSTALLATION_RESOURCE_ID : resource.id}::text`,
  namespaceId: sql`${namespaceOf(resource)}::text`
})

/** The scope of the row `alias` of `access_bindings` (which records its Namespace). */
export const bindingScope = (sql: SqlClient.SqlClient, alias: string): Scope => ({
  kind: sql.unsafe(`${alias}.resource_kind`),
  id: sql.unsafe(`${alias}.resource_id`),
  namespaceId: sql.unsafe(`${alias}.namespace_id`)
})

/**
 * Whether `outer` covers `inner`: `outer` is the Installation, or the Namespace `inner` is in,
 * or exactly `inner`. The rule for a binding reaching a resource and for one binding being held
 * at "the same or a broader scope" than another (SPEC 5.5.1).
 */
export const scopeCovers = (sql: SqlClient.SqlClient, outer: Scope, inner: Scope) =>
  sql`(${outer.kind} = 'installation'
    OR (${outer.kind} = 'namespace' AND ${outer.id} = ${inner.namespaceId})
    OR (${outer.kind} = ${inner.kind} AND ${outer.id} = ${inner.id}))`

/** `principalId` has a binding whose Role has `permission` and whose scope covers `target`. */
export const grantHeld = (
  sql: SqlClient.SqlClient,
  principalId: Statement.Fragment,
  permission: Statement.Fragment,
  target: Scope
) =>
  sql`EXISTS (
    SELECT 1 FROM access_bindings iam_b JOIN roles iam_r ON iam_r.id = iam_b.role_id
    WHERE iam_b.principal_id = ${principalId}
      AND ${permission} = ANY (iam_r.permissions)
      AND ${scopeCovers(sql, bindingScope(sql, "iam_b"), target)}
  )`

/**
 * A Restriction as the outer side of a cover. It records no Namespace for an exact resource;
 * as the outer side only its kind and id are compared, so none is needed.
 */
const restrictionScope = (sql: SqlClient.SqlClient): Scope => ({
  kind: sql`iam_x.resource_kind`,
  id: sql`iam_x.resource_id`,
  namespaceId: sql`NULL`
})

/** `principalId` has a Restriction on `permission` (or `*`) whose scope meets `where`. */
const restrictionWhere = (
  sql: SqlClient.SqlClient,
  principalId: Statement.Fragment,
  permission: Statement.Fragment,
  where: Statement.Fragment
) =>
  sql`EXISTS (
    SELECT 1 FROM restrictions iam_x
    WHERE iam_x.principal_id = ${principalId}
      AND (iam_x.permission = ${permission} OR iam_x.permission = '*')
      AND ${where}
  )`

/** `principalId` has a Restriction on `permission` (or `*`) whose scope covers `target`. */
export const restrictionReaches = (
  sql: SqlClient.SqlClient,
  principalId: Statement.Fragment,
  permission: Statement.Fragment,
  target: Scope
) => restrictionWhere(sql, principalId, permission, scopeCovers(sql, restrictionScope(sql), target))

/**
 * `principalId` has a Restriction on `permission` (or `*`) that may reach anything in the
 * binding scope `target`: holding a grant over a whole scope needs it unrestricted everywhere
 * in it. An exact-resource Restriction records no Namespace, so it counts against every scope;
 * only a Restriction on another Namespace than the target's is clearly elsewhere.
 */
export const restrictionWithin = (
  sql: SqlClient.SqlClient,
  principalId: Statement.Fragment,
  permission: Statement.Fragment,
  target: Scope
) =>
  restrictionWhere(
    sql,
    principalId,
    permission,
    sql`NOT (${target.kind} <> 'installation' AND iam_x.resource_kind = 'namespace'
             AND iam_x.resource_id IS DISTINCT FROM ${target.namespaceId})`
  )
