import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Caller } from "./caller.js"
import type { Permission } from "./permissions.js"
import { grantHeld, resourceScope, restrictionReaches, type Scope } from "./grantPredicate.js"
import { namespaceOf, type ResourceRef } from "./resource.js"
import { withExportedSpan } from "../observability/spans.js"

export type Decision =
  | { readonly _tag: "Allowed" }
  | { readonly _tag: "Denied"; readonly reason: "no-grant" | "restricted" | "out-of-scope" }

const allowed: Decision = { _tag: "Allowed" }

/**
 * The one authorization decision of the service (DESIGN §6): does `caller` hold `permission` on
 * exactly `resource`? A binding on the Installation covers everything; on a Namespace, what is
 * in it; otherwise only the exact resource. A matching Restriction denies and beats any grant.
 * Policy is read on every decision with two index lookups on the caller's own bindings and
 * restrictions, whatever the size of the Installation. The predicate is `grantPredicate.ts`,
 * shared with `visibleTo` and grant coverage.
 */
export const decide = (
  caller: Pick<Caller, "principalId" | "namespaceId">,
  permission: Permission,
  resource: ResourceRef
): Effect.Effect<Decision, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const namespaceId = namespaceOf(resource)
    // A Namespace-scoped principal never reaches another Namespace or the Installation.
    if (caller.namespaceId !== null && caller.namespaceId !== namespaceId) {
      return { _tag: "Denied", reason: "out-of-scope" } as const
    }
    const sql = yield* SqlClient.SqlClient
    const target = resourceScope(sql, resource)
    const principal = sql`${caller.principalId}`
    const held = sql`${permission}::text`
    const rows = yield* sql<{ granted: boolean; restricted: boolean }>`
      SELECT ${grantHeld(sql, principal, held, target)} AS granted,
             ${restrictionReaches(sql, principal, held, target)} AS restricted
    `
    const row = rows[0]!
    if (row.restricted) return { _tag: "Denied", reason: "restricted" } as const
    return row.granted ? allowed : ({ _tag: "Denied", reason: "no-grant" } as const)
  }).pipe(withExportedSpan("Iam.decide", { attributes: { permission, resourceKind: resource.kind }, captureStackTrace: false }))

/**
 * A SQL condition selecting the rows of a list that `caller` may see with `permission`, for one
 * query per page instead of one decision per item. `idColumn` and `namespaceColumn` name the
 * listed row's id and Namespace id (the same column for a list of Namespaces). The same
 * predicate as `decide` (a property test checks they agree row for row).
 */
export const visibleTo = (
  sql: SqlClient.SqlClient,
  caller: Pick<Caller, "principalId" | "namespaceId">,
  permission: Permission,
  kind: ResourceRef["kind"],
  columns: { readonly id: string; readonly namespaceId: string }
) => {
  const target: Scope = { kind: sql`${kind}::text`, id: sql.unsafe(columns.id), namespaceId: sql.unsafe(columns.namespaceId) }
  const principal = sql`${caller.principalId}`
  const held = sql`${permission}::text`
  const scope = caller.namespaceId === null ? sql`TRUE` : sql`${target.namespaceId} = ${caller.namespaceId}`
  return sql`(
    ${scope}
    AND ${grantHeld(sql, principal, held, target)}
    AND NOT ${restrictionReaches(sql, principal, held, target)}
  )`
}

/**
 * `decide`'s "Allowed" as one SQL boolean, for a statement that folds the decision into the
 * read it guards (a list page). FALSE when the caller's scope excludes the resource, like
 * `decide`. A FALSE says only "not allowed": the reason (and the 403 or 404 it implies) comes
 * from `decide`, which the caller runs on that rare path.
 */
export const allowedSql = (
  sql: SqlClient.SqlClient,
  caller: Pick<Caller, "principalId" | "namespaceId">,
  permission: Permission,
  resource: ResourceRef
) => {
  if (caller.namespaceId !== null && caller.namespaceId !== namespaceOf(resource)) return sql`FALSE`
  return heldUnrestricted(sql, sql`${caller.principalId}`, permission, resource)
}

/**
 * `allowedSql` for a principal the statement itself finds: its id and Namespace are columns (the
 * credential lookup's), so the decision rides in the credential statement. The scope check is
 * SQL here: a principal scoped to a Namespace reaches nothing outside it, like `decide`.
 */
export const allowedSqlOf = (
  sql: SqlClient.SqlClient,
  principal: { readonly id: Statement.Fragment; readonly namespaceId: Statement.Fragment },
  permission: Permission,
  resource: ResourceRef
) =>
  sql`((${principal.namespaceId} IS NULL OR ${principal.namespaceId} IS NOT DISTINCT FROM ${namespaceOf(resource)}::text)
    AND ${heldUnrestricted(sql, principal.id, permission, resource)})`

/** A grant of `permission` reaching `resource`, and no Restriction reaching it: `decide`'s predicate. */
const heldUnrestricted = (
  sql: SqlClient.SqlClient,
  principal: Statement.Fragment,
  permission: Permission,
  resource: ResourceRef
) => {
  const target = resourceScope(sql, resource)
  const held = sql`${permission}::text`
  return sql`(${grantHeld(sql, principal, held, target)} AND NOT ${restrictionReaches(sql, principal, held, target)})`
}
