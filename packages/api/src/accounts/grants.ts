import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { decide, firstUncoveredGrant, Installation, permission } from "@svc/core/iam"
import { Effect } from "effect"
import { withExportedSpan } from "@svc/core/observability"

/** Whether a principal currently holds `installation:administer`. */
export const administersInstallation = (principalId: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.map(
    decide({ principalId, namespaceId: null }, permission("installation", "administer"), Installation),
    (decision) => decision._tag === "Allowed"
  )

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
