import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { allowedSqlOf, decide, firstUncoveredGrant, Installation, permission } from "@svc/core/iam"
import { Effect } from "effect"
import { withExportedSpan } from "@svc/core/observability"

/** Whether a principal currently holds `installation:administer`. */
export const administersInstallation = (principalId: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.map(
    decide({ principalId, namespaceId: null }, permission("installation", "administer"), Installation),
    (decision) => decision._tag === "Allowed"
  )

/**
 * Makes the changes that may remove an enabled human Installation administrator take turns
 * (until the transaction ends): two administrators disabling each other at once would otherwise
 * each see the other as the one who remains. Taken after the target's row lock, never before.
 */
export const serializeAdministratorRemovals: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`SELECT pg_advisory_xact_lock(hashtext('accounts.administrator-removal'))`.pipe(Effect.asVoid)
)

/**
 * Whether an account other than `accountId` is an enabled human Installation administrator: it
 * can sign in (enrolled, not disabled or revoked, with a sign-in method, its human Principal not
 * deleted) and its Principal holds `installation:administer` unrestricted, as `decide` would say.
 */
export const anotherEnabledAdministrator = (accountId: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ found: boolean }>`
        SELECT EXISTS (
          SELECT 1 FROM accounts a JOIN principals p ON p.id = a.principal_id
          WHERE a.id <> ${accountId} AND a.enrolled_at IS NOT NULL AND NOT a.disabled AND a.revoked_at IS NULL
            AND EXISTS (SELECT 1 FROM account_methods m WHERE m.account_id = a.id)
            AND p.kind = 'human' AND p.deleted_at IS NULL
            AND ${allowedSqlOf(sql, { id: sql`p.id`, namespaceId: sql`p.namespace_id` }, permission("installation", "administer"), Installation)}
        ) AS found
      `,
      (rows) => rows[0]?.found === true
    ))

/**
 * Whether `callerId` holds every grant of `targetId` (SPEC 4.1): the one grant-coverage rule of
 * key issuance (SPEC 5.5.1), each permission of each target binding held at the same or a
 * broader scope, whatever the Roles are called.
 */
export const holdsEveryGrant = (
  callerId: string,
  targetId: string
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.map(firstUncoveredGrant(callerId, targetId), (missing) => missing === undefined).pipe(
    withExportedSpan("Accounts.holdsEveryGrant")
  )
