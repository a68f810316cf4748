import { SqlClient } from "@effect/sql"
import { DependencyUnavailable, Unauthenticated } from "@svc/core/errors"
import { digestOf } from "@svc/core/iam"
import { Effect } from "effect"
import { HashGate, type HashingBusy } from "../auth/hashGate.js"
import { DECOY_HASH, verifyPassword } from "../auth/passwords.js"
import { issueSession, type IssuedSession } from "../auth/sessions.js"
import { administersInstallation } from "./grants.js"
import { releaseReservation, reserveAttempt, Throttled, throttleDelay, type ThrottleState } from "./throttle.js"

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

/** What the gated part of a sign-in decided; the throttle's wait happens outside the gate. */
type Outcome =
  | { readonly _tag: "SignedIn"; readonly accountId: string }
  | { readonly _tag: "Failed" }
  | { readonly _tag: "Throttled"; readonly state: ThrottleState }

/**
 * Reserve, look up, check: the database and argon2 work of one attempt. The attempt is reserved
 * with the throttle before anything else, so concurrent attempts cannot all pass a count read
 * before any of them failed. The password is verified, against a decoy hash when no account has
 * the email, so timing does not tell whether it exists. A disabled, revoked or unenrolled
 * account fails exactly like a wrong password. Within the administrator reserve only an
 * Installation administrator's correct password signs in.
 */
const evaluate = (normalized: string, password: string, clientAddress: string | null) =>
  Effect.gen(function* () {
    const reservation = yield* reserveAttempt(digestOf(normalized), clientAddress)
    const throttled: Outcome = { _tag: "Throttled", state: reservation.state }
    if (reservation.admission === "refuse") return throttled
    const account = yield* findPasswordAccount(normalized)
    const matches = yield* verifyPassword(account?.password_hash ?? DECOY_HASH, password)
    const signsIn = account !== undefined && account.usable && matches
    if (reservation.admission === "reserve") {
      const exempt = signsIn && (yield* administersInstallation(account.principal_id))
      if (!exempt) return throttled
    }
    if (!signsIn) return { _tag: "Failed" } as const
    yield* releaseReservation(reservation.id)
    return { _tag: "SignedIn", accountId: account.id } as const
  })

/**
 * Email and password sign-in (SPEC 5.2, 5.4). The work of `evaluate` runs through the
 * server's `HashGate` (issue 10 §3): over its bound the attempt is refused with `HashingBusy`
 * before touching the database, so a flood of sign-ins cannot take the connections and cores
 * authenticated traffic needs. A throttled attempt then waits 1-8 s, holding no slot, and is
 * refused with `Throttled`.
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
    const gate = yield* HashGate
    const outcome = yield* gate.run(evaluate(email.toLowerCase(), password, clientAddress))
    switch (outcome._tag) {
      case "SignedIn":
        return yield* issueSession(outcome.accountId)
      case "Failed":
        return yield* badCredentials
      case "Throttled":
        yield* Effect.sleep(throttleDelay(outcome.state))
        return yield* new Throttled({ retryAfterSeconds: outcome.state.retryAfterSeconds })
    }
  }).pipe(
    // Authentication fails closed when its storage is unreachable (SPEC 5.9): 503, never a guess.
    Effect.catchTag("SqlError", (error) =>
      Effect.zipRight(
        Effect.logWarning("sign-in could not reach the database", error),
        Effect.fail(new DependencyUnavailable({ message: "Sign-in is unavailable; retry later." }))
      )),
    Effect.withSpan("SignIn.password")
  )
