import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Caller } from "./caller.js"
import type { Permission } from "./permissions.js"
import { namespaceOf, type ResourceRef } from "./resource.js"

export type Decision =
  | { readonly _tag: "Allowed" }
  | { readonly _tag: "Denied"; readonly reason: "no-grant" | "restricted" | "out-of-scope" }

const allowed: Decision = { _tag: "Allowed" }

/**
 * The one authorization decision of the service (DESIGN §6): does `caller` hold `permission` on
 * exactly `resource`? A binding on the Installation covers everything; on a Namespace, what is
 * in it; otherwise only the exact resource. A matching Restriction denies and beats any grant.
 * Policy is read on every decision with two index lookups on the caller's own bindings and
 * restrictions, whatever the size of the Installation.
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
    const kind = resource.kind
    const id = resource.kind === "installation" ? "" : resource.id
    const rows = yield* sql<{ granted: boolean; restricted: boolean }>`
      SELECT
        EXISTS (
          SELECT 1 FROM access_bindings b JOIN roles r ON r.id = b.role_id
          WHERE b.principal_id = ${caller.principalId}
            AND ${permission} = ANY (r.permissions)
            AND (b.resource_kind = 'installation'
              OR (b.resource_kind = 'namespace' AND b.resource_id = ${namespaceId ?? ""})
              OR (b.resource_kind = ${kind} AND b.resource_id = ${id}))
        ) AS granted,
        EXISTS (
          SELECT 1 FROM restrictions x
          WHERE x.principal_id = ${caller.principalId}
            AND (x.permission = ${permission} OR x.permission = '*')
            AND (x.resource_kind = 'installation'
              OR (x.resource_kind = 'namespace' AND x.resource_id = ${namespaceId ?? ""})
              OR (x.resource_kind = ${kind} AND x.resource_id = ${id}))
        ) AS restricted
    `
    const row = rows[0]!
    if (row.restricted) return { _tag: "Denied", reason: "restricted" } as const
    return row.granted ? allowed : ({ _tag: "Denied", reason: "no-grant" } as const)
  }).pipe(Effect.withSpan("Iam.decide", { attributes: { permission, resourceKind: resource.kind } }))

/**
 * A SQL condition selecting the rows of a list that `caller` may see with `permission`, for one
 * query per page instead of one decision per item. `idColumn` and `namespaceColumn` name the
 * listed row's id and Namespace id (the same column for a list of Namespaces).
 */
export const visibleTo = (
  sql: SqlClient.SqlClient,
  caller: Pick<Caller, "principalId" | "namespaceId">,
  permission: Permission,
  kind: ResourceRef["kind"],
  columns: { readonly id: string; readonly namespaceId: string }
) => {
  const id = sql.unsafe(columns.id)
  const ns = sql.unsafe(columns.namespaceId)
  const scope = caller.namespaceId === null ? sql`TRUE` : sql`${ns} = ${caller.namespaceId}`
  return sql`(
    ${scope}
    AND EXISTS (
      SELECT 1 FROM access_bindings b JOIN roles r ON r.id = b.role_id
      WHERE b.principal_id = ${caller.principalId}
        AND ${permission} = ANY (r.permissions)
        AND (b.resource_kind = 'installation'
          OR (b.resource_kind = 'namespace' AND b.resource_id = ${ns})
          OR (b.resource_kind = ${kind} AND b.resource_id = ${id}))
    )
    AND NOT EXISTS (
      SELECT 1 FROM restrictions x
      WHERE x.principal_id = ${caller.principalId}
        AND (x.permission = ${permission} OR x.permission = '*')
        AND (x.resource_kind = 'installation'
          OR (x.resource_kind = 'namespace' AND x.resource_id = ${ns})
          OR (x.resource_kind = ${kind} AND x.resource_id = ${id}))
    )
  )`
}
