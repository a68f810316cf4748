import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Limits } from "@svc/core/schema"
import { Data, Duration, Effect } from "effect"

/**
 * The sign-in throttle of SPEC 5.4, with its state in PostgreSQL (`sign_in_failures`) so every
 * API replica sees the same count. Keyed by the SHA-256 digest of the normalized email, whether
 * or not an account has it, and, behind a trusted proxy (`SVC_TRUSTED_PROXIES`), by the client
 * address the proxy reports (docs/decisions/identity.md).
 */

const WINDOW_SECONDS = 60
const LIMIT = Limits.signInFailuresPerMinutePerEmail
const ADDRESS_LIMIT = Limits.signInFailuresPerMinutePerClientAddress
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

/** The failures of one key (an email digest or a client address) in the window. */
const keyState = (
  sql: SqlClient.SqlClient,
  filter: ReturnType<SqlClient.SqlClient["unsafe"]>,
  limit: number
): Effect.Effect<ThrottleState, SqlError> =>
  Effect.map(
    sql<{ failures: number; retry_after: number | null }>`
      WITH recent AS (
        SELECT at FROM sign_in_failures
        WHERE ${filter} AND at > now() - make_interval(secs => ${WINDOW_SECONDS})
      )
      SELECT
        (SELECT count(*)::int FROM recent) AS failures,
        (SELECT ceil(extract(epoch FROM (at + make_interval(secs => ${WINDOW_SECONDS}) - now())))::int
         FROM recent ORDER BY at DESC OFFSET ${limit - 1} LIMIT 1) AS retry_after
    `,
    (rows) => {
      const failures = rows[0]?.failures ?? 0
      const retryAfter = Math.min(WINDOW_SECONDS, Math.max(1, rows[0]?.retry_after ?? 1))
      // `failures` is reported relative to the key's own limit, for the delay.
      return { throttled: failures >= limit, failures: failures - limit + LIMIT, retryAfterSeconds: retryAfter }
    }
  )

/**
 * Whether a sign-in for this email (and, when known, from this client address) is over a
 * limit: 10 failures a minute per email, 20 per client address. The stricter answer wins.
 */
export const throttleState = (
  emailDigest: Buffer,
  clientAddress: string | null = null
): Effect.Effect<ThrottleState, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byEmail = yield* keyState(sql, sql`email_digest = ${emailDigest}`, LIMIT)
    if (clientAddress === null) return byEmail
    const byAddress = yield* keyState(sql, sql`client_address = ${clientAddress}`, ADDRESS_LIMIT)
    if (!byAddress.throttled) return byEmail
    if (!byEmail.throttled) return byAddress
    return {
      throttled: true,
      failures: Math.max(byEmail.failures, byAddress.failures),
      retryAfterSeconds: Math.max(byEmail.retryAfterSeconds, byAddress.retryAfterSeconds)
    }
  }).pipe(Effect.withSpan("SignIn.throttleState"))

/** Records one failed sign-in and prunes failures past the retention. */
export const recordFailure = (
  emailDigest: Buffer,
  clientAddress: string | null = null
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO sign_in_failures (email_digest, client_address) VALUES (${emailDigest}, ${clientAddress})`
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
