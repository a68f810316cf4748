import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { recordAudit } from "@svc/core/audit"
import { Forbidden, NotFound, Unauthenticated } from "@svc/core/errors"
import { type Caller, CurrentCaller, Installation, permission } from "@svc/core/iam"
import { Effect } from "effect"
import { type AuthorizationError, authorize } from "../auth/authorize.js"
import { holdsEveryGrant } from "./grants.js"

/**
 * Account operations and `/recovery` need a current human Installation administrator (SPEC 4.1,
 * 5.5.4): a service key is 401, a session without `installation:administer` 403.
 */
export const requireHumanAdministrator: Effect.Effect<
  Caller,
  Unauthenticated | AuthorizationError,
  CurrentCaller | SqlClient.SqlClient
> = Effect.gen(function* () {
  const caller = yield* CurrentCaller
  if (caller.credential._tag !== "Session") {
    return yield* new Unauthenticated({ message: "Account management needs a human administrator's session, not a service key." })
  }
  yield* authorize(permission("installation", "administer"), Installation)
  return caller
})

/** An account row, locked for the rest of the transaction. */
export interface LockedAccount {
  readonly id: string
  readonly principal_id: string
  readonly disabled: boolean
  readonly revoked: boolean
  readonly enrolled: boolean
  readonly version: number
}

export const lockAccount = (userId: string): Effect.Effect<LockedAccount, NotFound | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<LockedAccount>`
      SELECT id, principal_id, disabled, revoked_at IS NOT NULL AS revoked, enrolled_at IS NOT NULL AS enrolled, version
      FROM accounts WHERE id = ${userId}
      FOR UPDATE
    `
    const account = rows[0]
    if (account === undefined) return yield* new NotFound({ message: "The account does not exist." })
    return account
  })

/** SPEC 4.1: mutations with `expectedVersion` need the caller to hold every grant of the target. */
export const requireEveryGrant = (
  caller: Caller,
  targetPrincipalId: string
): Effect.Effect<void, Forbidden | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(holdsEveryGrant(caller.principalId, targetPrincipalId), (holds) =>
    holds
      ? Effect.void
      : Effect.fail(new Forbidden({ message: "The caller does not hold every grant of the target account's Principal." })))

/**
 * Runs `effect` in one transaction (state and audit commit together); a 403 it ends with is
 * audited after the rollback, so the denial is recorded even though nothing else is.
 */
export const transactional = <A, E extends { readonly _tag: string }, R>(
  caller: Caller,
  subject: { readonly kind: string; readonly id: string },
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError>, R | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(effect).pipe(
      Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die),
      Effect.tapError((error) =>
        error._tag === "Forbidden"
          ? Effect.orDie(recordAudit({
            kind: "authorization.denied",
            outcome: "denied",
            actorPrincipalId: caller.principalId,
            resource: subject,
            details: { reason: "missing-grants" }
          }))
          : Effect.void
      )
    ) as Effect.Effect<A, Exclude<E, SqlError>, R | SqlClient.SqlClient>
  })

/** A unique-constraint violation (SQLSTATE 23505) among the causes of a SQL failure. */
export const isUniqueViolation = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    if ((current as { code?: unknown }).code === "23505") return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}
