import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Limits } from "@svc/core/schema"
import { Data, Duration, Effect } from "effect"

/**
 * The sign-in throttle of SPEC 5.4, with its state in PostgreSQL (`sign_in_failures`) so every
 * API replica sees the same count. Keyed by the SHA-256 digest of the normalized email, whether
 * or not an account has it. Per-client-address limits need a trusted proxy, which the service
 * has no setting for yet (docs/decisions/identity.md).
 */

const WINDOW_SECONDS = 60
const LIMIT = Limits.signInFailuresPerMinutePerEmail
/** Failures are kept a while past the window, then pruned as new ones are recorded. */
const RETENTION = "10 minutes"

export interface ThrottleState {
  readonly throttled: boolean
  /** Failures for this email within the last minute. */
  readonly failures: number
  /** Seconds until the count falls below the limit (when throttled). */
  readonly retryAfterSeconds: number
}

/** Too many failed sign-ins: answered with 429 and `Retry-After` (internal, not a wire error). */
export class Throttled extends Data.TaggedError("Throttled")<{ readonly retryAfterSeconds: number }> {}

export const throttleState = (emailDigest: Buffer): Effect.Effect<ThrottleState, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ failures: number; retry_after: number | null }>`
      WITH recent AS (
        SELECT at FROM sign_in_failures
        WHERE email_digest = ${emailDigest} AND at > now() - make_interval(secs => ${WINDOW_SECONDS})
      )
      SELECT
        (SELECT count(*)::int FROM recent) AS failures,
        (SELECT ceil(extract(epoch FROM (at + make_interval(secs => ${WINDOW_SECONDS}) - now())))::int
         FROM recent ORDER BY at DESC OFFSET ${LIMIT - 1} LIMIT 1) AS retry_after
    `
    const failures = rows[0]?.failures ?? 0
    const retryAfter = Math.min(WINDOW_SECONDS, Math.max(1, rows[0]?.retry_after ?? 1))
    return { throttled: failures >= LIMIT, failures, retryAfterSeconds: retryAfter }
  }).pipe(Effect.withSpan("SignIn.throttleState"))

/** Records one failed sign-in and prunes failures past the retention. */
export const recordFailure = (emailDigest: Buffer): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO sign_in_failures (email_digest) VALUES (${emailDigest})`
    yield* sql`DELETE FROM sign_in_failures WHERE at < now() - ${RETENTION}::interval`
  }).pipe(Effect.withSpan("SignIn.recordFailure"))

/**
 * How long a throttled attempt waits before its 429: one second for the first attempt over the
 * limit, one more for each further one, at most eight (SPEC 8: 1-8 s). Effect's Clock, so a
 * TestClock can step it.
 */
export const throttleDelay = (state: ThrottleState): Duration.Duration =>
  Duration.seconds(
    Math.min(Limits.signInDelaySeconds.max, Math.max(Limits.signInDelaySeconds.min, state.failures - LIMIT + 1))
  )
