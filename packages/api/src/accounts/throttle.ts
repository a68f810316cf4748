import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Limits } from "@svc/core/schema"
import { Data, Duration, Effect } from "effect"

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

/** The attempts of one key (an email digest or a client address) in the window; call under its lock. */
const keyState = (
  sql: SqlClient.SqlClient,
  filter: ReturnType<SqlClient.SqlClient["unsafe"]>,
  limit: number
): Effect.Effect<KeyState, SqlError> =>
  Effect.map(
    sql<{ attempts: number; evaluations: number; retry_after: number | null }>`
      WITH recent AS (
        SELECT at, evaluated FROM sign_in_failures
        WHERE ${filter} AND at > now() - make_interval(secs => ${WINDOW_SECONDS})
      )
      SELECT
        (SELECT count(*)::int FROM recent) AS attempts,
        (SELECT count(*)::int FROM recent WHERE evaluated) AS evaluations,
        (SELECT ceil(extract(epoch FROM (at + make_interval(secs => ${WINDOW_SECONDS}) - now())))::int
         FROM recent WHERE evaluated ORDER BY at DESC OFFSET ${limit - 1} LIMIT 1) AS retry_after
    `,
    (rows) => {
      const attempts = rows[0]?.attempts ?? 0
      const evaluations = rows[0]?.evaluations ?? 0
      const retryAfter = Math.min(WINDOW_SECONDS, Math.max(1, rows[0]?.retry_after ?? 1))
      const admission: Admission = evaluations < limit ? "evaluate" : evaluations < limit + RESERVE ? "reserve" : "refuse"
      // `failures` is reported relative to the key's own limit, for the delay.
      return {
        admission,
        state: { throttled: admission !== "evaluate", failures: attempts - limit + LIMIT, retryAfterSeconds: retryAfter }
      }
    }
  )

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

// Transaction-scoped advisory locks serialize reservations per key across every replica; they
// are always taken email first, then address, so two reservations cannot deadlock.
const lockKey = (sql: SqlClient.SqlClient, key: string) =>
  sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`

/**
 * Reserves one sign-in attempt before its password is checked: under the locks of its keys,
 * counts the evaluations in the window, decides the admission and records the attempt (as a
 * failure, until `releaseReservation` says otherwise), in one transaction.
 */
export const reserveAttempt = (
  emailDigest: Buffer,
  clientAddress: string | null = null
): Effect.Effect<Reservation, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reserved = yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* lockKey(sql, `sign-in:email:${emailDigest.toString("hex")}`)
        const byEmail = yield* keyState(sql, sql`email_digest = ${emailDigest}`, LIMIT)
        let decided = byEmail
        if (clientAddress !== null) {
          yield* lockKey(sql, `sign-in:address:${clientAddress}`)
          decided = stricter(byEmail, yield* keyState(sql, sql`client_address = ${clientAddress}`, ADDRESS_LIMIT))
        }
        const rows = yield* sql<{ id: string }>`
          INSERT INTO sign_in_failures (email_digest, client_address, evaluated)
          VALUES (${emailDigest}, ${clientAddress}, ${decided.admission !== "refuse"})
          RETURNING id::text AS id
        `
        return { id: rows[0]!.id, admission: decided.admission, state: decided.state }
      })
    )
    yield* sql`DELETE FROM sign_in_failures WHERE at < now() - ${RETENTION}::interval`
    return reserved
  }).pipe(Effect.withSpan("SignIn.reserveAttempt"))

/** A reserved attempt signed in: it is not a failure. */
export const releaseReservation = (id: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM sign_in_failures WHERE id = ${id}::bigint`).pipe(
    Effect.asVoid,
    Effect.withSpan("SignIn.releaseReservation")
  )

/**
 * How long a throttled attempt waits before its 429: one second for the first attempt over the
 * limit, one more for each further one, at most eight (SPEC 8: 1-8 s). Effect's Clock, so a
 * TestClock can step it.
 */
export const throttleDelay = (state: ThrottleState): Duration.Duration =>
  Duration.seconds(
    Math.min(Limits.signInDelaySeconds.max, Math.max(Limits.signInDelaySeconds.min, state.failures - LIMIT + 1))
  )
