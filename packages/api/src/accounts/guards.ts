import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { AuditLog } from "@svc/core/audit"
import { AccountsRepo } from "@svc/core/db"
import { DependencyUnavailable, Forbidden, NotFound, Unauthenticated } from "@svc/core/errors"
import { type Caller, CurrentCaller, Installation, permission } from "@svc/core/iam"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { holdsEveryGrant } from "./grants.js"

/** A change, its audit or a denial's audit that cannot be stored: 503, fail closed (SPEC 5.9). */
const unavailable = (error: SqlError) =>
  Effect.zipRight(
    Effect.logWarning("account management: the change or its audit could not be stored", error),
    Effect.fail(new DependencyUnavailable({ message: "Account management is unavailable; read the account again before retrying." }))
  )

/**
 * The guards every account and recovery operation shares, with their dependencies taken once:
 * who may call (a human Installation administrator), the account lock, the grant-coverage rule
 * and the transaction whose 403 is audited after the rollback.
 */
export class AccountGuards extends Effect.Service<AccountGuards>()("@svc/api/AccountGuards", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* AccountsRepo
    const audit = yield* AuditLog
    const authorization = yield* Authorization

    /**
     * Account operations and `/recovery` need a current human Installation administrator (SPEC
     * 4.1, 5.5.4): a service key is 401, a session without `installation:administer` 403.
     */
    const requireHumanAdministrator = Effect.gen(function* () {
      const caller = yield* CurrentCaller
      if (caller.credential._tag !== "Session") {
        return yield* new Unauthenticated({ message: "Account management needs a human administrator's session, not a service key." })
      }
      yield* authorization.authorize(permission("installation", "administer"), Installation)
      return caller
    })

    /** An account row, locked for the rest of the transaction; 404 when there is none. */
    const lockAccount = (userId: string) =>
      Effect.flatMap(accounts.lock(userId), Option.match({
        onNone: () => Effect.fail(new NotFound({ message: "The account does not exist." })),
        onSome: Effect.succeed
      }))

    /** SPEC 4.1: mutations with `expectedVersion` need the caller to hold every grant of the target. */
    const requireEveryGrant = (caller: Caller, targetPrincipalId: string): Effect.Effect<void, Forbidden | SqlError> =>
      Effect.flatMap(holdsEveryGrant(caller.principalId, targetPrincipalId), (holds) =>
        holds
          ? Effect.void
          : Effect.fail(new Forbidden({ message: "The caller does not hold every grant of the target account's Principal." }))
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /**
     * Runs `effect` in one transaction (state and audit commit together); a 403 it ends with is
     * audited after the rollback, so the denial is recorded even though nothing else is. A
     * database failure is 503 `DEPENDENCY_UNAVAILABLE`, never retried here: the outcome of a
     * failed commit may be unknown, and the client reads the account again.
     */
    const transactional = <A, E extends { readonly _tag: string }, R>(
      caller: Caller,
      subject: { readonly kind: string; readonly id: string },
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, Exclude<E, SqlError> | DependencyUnavailable, R> =>
      sql.withTransaction(effect).pipe(
        // State and audit commit together: a store that cannot take either fails closed (SPEC 5.9).
        Effect.catchIf((error): error is SqlError => error instanceof SqlError, unavailable),
        Effect.tapError((error) =>
          error._tag === "Forbidden"
            ? audit.record({
              kind: "authorization.denied",
              outcome: "denied",
              actorPrincipalId: caller.principalId,
              resource: subject,
              details: { reason: "missing-grants" }
            }).pipe(Effect.catchTag("SqlError", unavailable))
            : Effect.void
        )
      ) as Effect.Effect<A, Exclude<E, SqlError> | DependencyUnavailable, R>

    return { requireHumanAdministrator, lockAccount, requireEveryGrant, transactional }
  }),
  dependencies: [AccountsRepo.Default, AuditLog.Default, Authorization.Default]
}) {}

/** A unique-constraint violation (SQLSTATE 23505) among the causes of a SQL failure. */
export const isUniqueViolation = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    if ((current as { code?: unknown }).code === "23505") return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}
