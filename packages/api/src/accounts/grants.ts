import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { decide, Installation, permission } from "@svc/core/iam"
import { Effect } from "effect"

/** Whether a principal currently holds `installation:administer`. */
export const administersInstallation = (principalId: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.map(
    decide({ principalId, namespaceId: null }, permission("installation", "administer"), Installation),
    (decision) => decision._tag === "Allowed"
  )

/**
 * Whether `callerId` holds every grant of `targetId` (SPEC 4.1): for each binding of the target,
 * the caller has a binding of the same Role on the same resource or a broader scope (the
 * Installation, or the Namespace the resource is in).
 */
export const holdsEveryGrant = (
  callerId: string,
  targetId: string
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ missing: number }>`
      SELECT count(*)::int AS missing
      FROM access_bindings t
      WHERE t.principal_id = ${targetId}
        AND NOT EXISTS (
          SELECT 1 FROM access_bindings c
          WHERE c.principal_id = ${callerId} AND c.role_id = t.role_id
            AND (c.resource_kind = 'installation'
              OR (c.resource_kind = 'namespace' AND c.resource_id = t.namespace_id)
              OR (c.resource_kind = t.resource_kind AND c.resource_id = t.resource_id))
        )
    `
    return (rows[0]?.missing ?? 0) === 0
  }).pipe(Effect.withSpan("Accounts.holdsEveryGrant"))
