import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * SPEC 5.5.1: a key carries every grant of its principal, so whoever issues (or revokes) one
 * must already hold each of those grants at the same or a broader scope. Returns the first
 * permission of `target` that `caller` does not hold that way, or undefined when it holds all.
 *
 * A caller's binding covers a target binding when it is on the Installation, on the target
 * binding's Namespace (for a binding inside a Namespace), or on the exact same resource, and
 * its Role has the permission. A caller's Restriction on that permission counts against it
 * unless it is clearly elsewhere (another Namespace). One query over the two principals'
 * bindings, whatever the size of the Installation.
 */
export const firstUncoveredGrant = (
  callerPrincipalId: string,
  targetPrincipalId: string
): Effect.Effect<string | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ permission: string }>`
      SELECT g.permission
      FROM access_bindings tb
        JOIN roles tr ON tr.id = tb.role_id
        CROSS JOIN LATERAL unnest(tr.permissions) AS g (permission)
      WHERE tb.principal_id = ${targetPrincipalId}
        AND (
          NOT EXISTS (
            SELECT 1 FROM access_bindings cb JOIN roles cr ON cr.id = cb.role_id
            WHERE cb.principal_id = ${callerPrincipalId}
              AND g.permission = ANY (cr.permissions)
              AND (cb.resource_kind = 'installation'
                OR (cb.resource_kind = 'namespace' AND tb.resource_kind <> 'installation'
                    AND cb.resource_id = tb.namespace_id)
                OR (cb.resource_kind = tb.resource_kind AND cb.resource_id = tb.resource_id))
          )
          OR EXISTS (
            SELECT 1 FROM restrictions x
            WHERE x.principal_id = ${callerPrincipalId}
              AND (x.permission = g.permission OR x.permission = '*')
              AND NOT (tb.resource_kind <> 'installation' AND x.resource_kind = 'namespace'
                       AND x.resource_id IS DISTINCT FROM tb.namespace_id)
          )
        )
      LIMIT 1
    `
    return rows[0]?.permission
  }).pipe(Effect.withSpan("ServiceKeys.firstUncoveredGrant"))
