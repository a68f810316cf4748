import { SqlClient } from "@effect/sql"
import { DependencyUnavailable, Unauthenticated } from "@svc/core/errors"
import { digestOf } from "@svc/core/iam"
import { Effect } from "effect"
import { HashGate, type HashingBusy } from "../auth/hashGate.js"
import { DECOY_HASH, verifyPassword } from "../auth/passwords.js"
import { issueSession, type IssuedSession } from "../auth/sessions.js"
import { administersInstallation } from "./grants.js"
import { releaseReservation, reserveAttempt, Throttled, throttleDelay } from "./throttle.js"

interface PasswordAccount {
  readonly id: string
  readonly principal_id: string
  readonly password_hash: string
  readonly usable: boolean
}

const findPasswordAccount = (email: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<PasswordAccount>`
      SELECT a.id, a.principal_id, m.password_hash,
             (NOT a.disabled AND a.revoked_at IS NULL AND a.enrolled_at IS NOT NULL AND p.deleted_at IS NULL) AS usable
      FROM accounts a
        JOIN principals p ON p.id = a.principal_id
        JOIN account_methods m ON m.account_id = a.id AND m.provider_id = 'password'
      WHERE a.email = ${email}
      ORDER BY m.created_at
      LIMIT 1
    `
    return rows[0]
  })

const badCredentials = new Unauthenticated({ message: "The email or password is incorrect." })

/**
 * Email and password sign-in (SPEC 5.2, 5.4). The attempt is reserved with the throttle before
 * anything else, so concurrent attempts cannot all pass a count read before any of them failed.
 * The password is verified, against a decoy hash when no account has the email, so timing does
 * not tell whether it exists. A disabled, revoked or unenrolled account fails exactly like a
 * wrong password. A throttled attempt waits 1-8 s and is refused with `Throttled`; within the
 * administrator reserve its password is still checked, and only an Installation administrator's
 * correct password signs in.
 */
export const signInWithPassword = (
  email: string,
  password: string,
  clientAddress: string | null = null
): Effect.Effect<
  IssuedSession,
  Unauthenticated | Throttled | HashingBusy | DependencyUnavailable,
  SqlClient.SqlClient | HashGate
> =>
  Effect.gen(function* () {
    const normalized = email.toLowerCase()
    const reservation = yield* reserveAttempt(digestOf(normalized), clientAddress)
    const throttled = Effect.zipRight(
      Effect.sleep(throttleDelay(reservation.state)),
      Effect.fail(new Throttled({ retryAfterSeconds: reservation.state.retryAfterSeconds }))
    )
    if (reservation.admission === "refuse") return yield* throttled
    const account = yield* findPasswordAccount(normalized)
    const gate = yield* HashGate
    // A check refused for load evaluated nothing: its reservation is no failure.
    const matches = yield* gate.run(verifyPassword(account?.password_hash ?? DECOY_HASH, password)).pipe(
      Effect.tapErrorTag("HashingBusy", () => releaseReservation(reservation.id))
    )
    const signsIn = account !== undefined && account.usable && matches
    if (reservation.admission === "reserve") {
      const exempt = signsIn && (yield* administersInstallation(account.principal_id))
      if (!exempt) return yield* throttled
    }
    if (!signsIn) return yield* badCredentials
    yield* releaseReservation(reservation.id)
    return yield* issueSession(account.id)
  }).pipe(
    // Authentication fails closed when its storage is unreachable (SPEC 5.9): 503, never a guess.
    Effect.catchTag("SqlError", (error) =>
      Effect.zipRight(
        Effect.logWarning("sign-in could not reach the database", error),
        Effect.fail(new DependencyUnavailable({ message: "Sign-in is unavailable; retry later." }))
      )),
    Effect.withSpan("SignIn.password")
  )
