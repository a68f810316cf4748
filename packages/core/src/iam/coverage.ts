import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { bindingScope, grantHeld, restrictionWithin } from "./grantPredicate.js"
import { withExportedSpan } from "../observability/spans.js"

/**
 * The grant-coverage rule (SPEC 4.1, 5.5.1), one for key issuance and account management: a
 * caller holds a target principal's grants when, for every permission of every binding of the
 * target, the caller holds that permission at the same or a broader scope (the predicate of
 * `decide`, asked about the target binding's whole scope) and has no Restriction on it that may
 * reach into that scope. Roles need not be the same: an Installation administrator holds a
 * `namespace-admin` binding's permissions through its Installation binding.
 *
 * Returns the first permission of `target` that `caller` does not hold that way, or undefined
 * when it holds all. One query over the two principals' bindings, whatever the size of the
 * Installation.
 */
export const firstUncoveredGrant = (
  callerPrincipalId: string,
  targetPrincipalId: string
): Effect.Effect<string | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const caller = sql`${callerPrincipalId}`
    const permission = sql`g.permission`
    const target = bindingScope(sql, "tb")
    const rows = yield* sql<{ permission: string }>`
      SELECT g.permission
      FROM access_bindings tb
        JOIN roles tr ON tr.id = tb.role_id
        CROSS JOIN LATERAL unnest(tr.permissions) AS g (permission)
      WHERE tb.principal_id = ${targetPrincipalId}
        AND (NOT ${grantHeld(sql, caller, permission, target)}
          OR ${restrictionWithin(sql, caller, permission, target)})
      LIMIT 1
    `
    return rows[0]?.permission
  }).pipe(withExportedSpan("Iam.firstUncoveredGrant"))
