import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { SignInFailuresRepo, type WindowCountRow } from "@svc/core/db"
import { Limits } from "@svc/core/schema"
import { Data, Duration, Effect } from "effect"
import { withExportedSpan } from "@svc/core/observability"

/**
 * The sign-in throttle of SPEC 5.4, with its state in PostgreSQL (`sign_in_failures`) so every
 * API replica sees the same count. Keyed by the SHA-256 digest of the normalized email, whether
 * or not an account has it, and, behind a trusted proxy (`SVC_TRUSTED_PROXIES`), by the client
 * address the proxy reports (docs/decisions/identity.md).
 *
 * Counting and admitting are one step: an attempt reserves its row under a per-key advisory
 * lock before any password is hashed, so however many attempts run at once, at most `LIMIT`
 * (per email) or `ADDRESS_LIMIT` (per address) ordinary evaluations, plus `RESERVE`
 * administrator-only evaluations, happen per key and window (issue 10 §2).
 */

const WINDOW_SECONDS = 60
const LIMIT = Limits.signInFailuresPerMinutePerEmail
const ADDRESS_LIMIT = Limits.signInFailuresPerMinutePerClientAddress
/**
 * Evaluations past the limit in which only an Installation administrator's correct password
 * signs in (SPEC 5.4); every other outcome is the same 429 as an unevaluated attempt, so they
 * bound, and do not widen, what a guessing burst can learn (docs/decisions/identity.md).
 */
export const RESERVE = 3
/** Attempts are kept a while past the window, then pruned as new ones are reserved. */
const RETENTION = "10 minutes"

/**
 * What a reserved attempt may do: `evaluate` (under the limit: the password is checked and a
 * failure is a 401), `reserve` (over the limit, within the administrator reserve: the password
 * is checked, but only an administrator signs in; anything else is throttled) or `refuse`
 * (throttled without checking the password).
 */
export type Admission = "evaluate" | "reserve" | "refuse"

export interface ThrottleState {
  readonly throttled: boolean
  /** Attempts for this email within the last minute, before this one (for the delay). */
  readonly failures: number
  /** Seconds until an ordinary evaluation is admitted again (when throttled). */
  readonly retryAfterSeconds: number
}

export interface Reservation {
  readonly id: string
  readonly admission: Admission
  readonly state: ThrottleState
}

/** Too many failed sign-ins: answered with 429 and `Retry-After` (internal, not a wire error). */
export class Throttled extends Data.TaggedError("Throttled")<{ readonly retryAfterSeconds: number }> {}

interface KeyState {
  readonly admission: Admission
  readonly state: ThrottleState
}

const severity: Record<Admission, number> = { evaluate: 0, reserve: 1, refuse: 2 }

/** The admission of one key from its attempts in the window (counted under the key's lock). */
const keyState = (counted: WindowCountRow, limit: number): KeyState => {
  const retryAfter = Math.min(WINDOW_SECONDS, Math.max(1, counted.retry_after ?? 1))
  const admission: Admission = counted.evaluations < limit
    ? "evaluate"
    : counted.evaluations < limit + RESERVE
    ? "reserve"
    : "refuse"
  // `failures` is reported relative to the key's own limit, for the delay.
  return {
    admission,
    state: { throttled: admission !== "evaluate", failures: counted.attempts - limit + LIMIT, retryAfterSeconds: retryAfter }
  }
}

/** The stricter of two keys' states wins. */
const stricter = (a: KeyState, b: KeyState): KeyState => {
  if (!b.state.throttled) return a
  if (!a.state.throttled) return b
  return {
    admission: severity[a.admission] >= severity[b.admission] ? a.admission : b.admission,
    state: {
      throttled: true,
      failures: Math.max(a.state.failures, b.state.failures),
      retryAfterSeconds: Math.max(a.state.retryAfterSeconds, b.state.retryAfterSeconds)
    }
  }
}

/** Reserving and releasing sign-in attempts, with the SqlClient (for the transaction) and the repository taken once. */
export class SignInThrottle extends Effect.Service<SignInThrottle>()("@svc/api/SignInThrottle", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const failures = yield* SignInFailuresRepo

    const counted = (key: { readonly emailDigest: Buffer } | { readonly clientAddress: string }, limit: number) =>
      Effect.map(
        failures.countWindow({
          email_digest: "emailDigest" in key ? key.emailDigest : null,
          client_address: "clientAddress" in key ? key.clientAddress : null,
          window_seconds: WINDOW_SECONDS,
          limit
        }),
        (row) => keyState(row, limit)
      )

    /**
     * Reserves one sign-in attempt before its password is checked: under the locks of its keys,
     * counts the evaluations in the window, decides the admission and records the attempt (as a
     * failure, until `release` says otherwise), in one transaction. The advisory locks are
     * transaction-scoped and always taken email first, then address, so two reservations cannot
     * deadlock.
     */
    const reserve = (emailDigest: Buffer, clientAddress: string | null = null): Effect.Effect<Reservation, SqlError> =>
      Effect.gen(function* () {
        const reserved = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* failures.lockKey(`sign-in:email:${emailDigest.toString("hex")}`)
            const byEmail = yield* counted({ emailDigest }, LIMIT)
            let decided = byEmail
            if (clientAddress !== null) {
              yield* failures.lockKey(`sign-in:address:${clientAddress}`)
              decided = stricter(byEmail, yield* counted({ clientAddress }, ADDRESS_LIMIT))
            }
            const row = yield* failures.insert({
              email_digest: emailDigest,
              client_address: clientAddress,
              evaluated: decided.admission !== "refuse"
            })
            return { id: row.id, admission: decided.admission, state: decided.state }
          })
        )
        yield* failures.prune(RETENTION)
        return reserved
      }).pipe(withExportedSpan("SignIn.reserveAttempt"))

    /** A reserved attempt signed in: it is not a failure. */
    const release = (id: string): Effect.Effect<void, SqlError> =>
      failures.release(id).pipe(withExportedSpan("SignIn.releaseReservation"))

    return { reserve, release }
  }),
  dependencies: [SignInFailuresRepo.Default]
}) {}

/**
 * How long a throttled attempt waits before its 429: one second for the first attempt over the
 * limit, one more for each further one, at most eight (SPEC 8: 1-8 s). Effect's Clock, so a
 * TestClock can step it.
 */
export const throttleDelay = (state: ThrottleState): Duration.Duration =>
  Duration.seconds(
    Math.min(Limits.signInDelaySeconds.max, Math.max(Limits.signInDelaySeconds.min, state.failures - LIMIT + 1))
  )
