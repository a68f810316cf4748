/**
 * Sign-in attempts in PostgreSQL (migration 0004): created by `start`, consumed once by the
 * callback, and redeemed once through the result receipt. Secrets are stored as digests.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { digestOf } from "@svc/core/iam"
import { Duration, Effect, Option } from "effect"
import type { ProviderId } from "./settings.js"

/** How long a started attempt may wait for its callback (SPEC leaves it open). */
export const ATTEMPT_TTL = Duration.minutes(10)
/** How long the console has, after the callback, to redeem the receipt. */
export const RECEIPT_TTL = Duration.minutes(10)

const seconds = (duration: Duration.Duration) => Math.round(Duration.toSeconds(duration))

export const createAttempt = (attempt: {
  readonly id: string
  readonly provider: ProviderId
  readonly state: string
  readonly binding: string
  readonly codeVerifier: string
  readonly nonce: string | null
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Old attempts are of no use to anyone: each start removes a bounded batch of them.
    yield* sql`
      DELETE FROM sign_in_attempts WHERE id IN (
        SELECT id FROM sign_in_attempts
        WHERE expires_at < now() AND (receipt_expires_at IS NULL OR receipt_expires_at < now())
        LIMIT 100
      )
    `
    yield* sql`
      INSERT INTO sign_in_attempts (id, provider_id, state_digest, binding_digest, code_verifier, nonce, expires_at)
      VALUES (${attempt.id}, ${attempt.provider}, ${digestOf(attempt.state)}, ${digestOf(attempt.binding)},
              ${attempt.codeVerifier}, ${attempt.nonce}, now() + make_interval(secs => ${seconds(ATTEMPT_TTL)}))
    `
  }).pipe(Effect.withSpan("SignInAttempts.create"))

export interface ConsumedAttempt {
  readonly id: string
  readonly codeVerifier: string
  readonly nonce: string | null
  /** The browser that started it presented its binding cookie. */
  readonly boundToBrowser: boolean
  readonly expired: boolean
}

/**
 * Consumes the attempt named by a callback's `state`, exactly once: a second callback with the
 * same state (a replayed code) finds nothing. The PKCE verifier is erased as it is returned.
 */
export const consumeAttempt = (options: {
  readonly provider: ProviderId
  readonly state: string
  readonly binding: string | undefined
}): Effect.Effect<Option.Option<ConsumedAttempt>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      id: string
      code_verifier: string
      nonce: string | null
      binding_digest: Buffer
      expired: boolean
    }>`
      UPDATE sign_in_attempts t
      SET consumed_at = now(), code_verifier = NULL
      FROM (
        SELECT id, code_verifier, binding_digest FROM sign_in_attempts
        WHERE state_digest = ${digestOf(options.state)} AND provider_id = ${options.provider} AND consumed_at IS NULL
        FOR UPDATE
      ) old
      WHERE t.id = old.id
      RETURNING t.id, old.code_verifier, t.nonce, old.binding_digest, t.expires_at <= now() AS expired
    `
    const row = rows[0]
    if (row === undefined) return Option.none()
    const binding = options.binding
    return Option.some({
      id: row.id,
      codeVerifier: row.code_verifier,
      nonce: row.nonce,
      boundToBrowser: binding !== undefined && digestOf(binding).equals(row.binding_digest),
      expired: row.expired
    })
  }).pipe(Effect.withSpan("SignInAttempts.consume"))

export interface EnrolledAccount {
  readonly id: string
  readonly principalId: string
  readonly methodId: string
}

/**
 * The enrolled, enabled, unrevoked account with this external identity, if any. Only an
 * administrator enrols identities: nothing is ever created here.
 */
export const findAccountBySubject = (
  provider: ProviderId,
  subject: string
): Effect.Effect<Option.Option<EnrolledAccount>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string; principal_id: string; method_id: string }>`
      SELECT a.id, a.principal_id, m.id AS method_id
      FROM account_methods m
        JOIN accounts a ON a.id = m.account_id
        JOIN principals p ON p.id = a.principal_id
      WHERE m.provider_id = ${provider} AND m.subject = ${subject}
        AND a.enrolled_at IS NOT NULL AND NOT a.disabled AND a.revoked_at IS NULL AND p.deleted_at IS NULL
    `
    const row = rows[0]
    return row === undefined ? Option.none() : Option.some({ id: row.id, principalId: row.principal_id, methodId: row.method_id })
  }).pipe(Effect.withSpan("SignInAttempts.findAccount"))

/** Records the session the callback issued and the digest of its one-use receipt. */
export const completeAttempt = (options: {
  readonly id: string
  readonly sessionId: string
  readonly receipt: string
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      UPDATE sign_in_attempts
      SET session_id = ${options.sessionId}, receipt_digest = ${digestOf(options.receipt)},
          receipt_expires_at = now() + make_interval(secs => ${seconds(RECEIPT_TTL)})
      WHERE id = ${options.id}
    `
  }).pipe(Effect.withSpan("SignInAttempts.complete"))

/**
 * Redeems a result receipt once: it must belong to this attempt and provider, be unused and
 * unexpired, and name the session the caller presents. Returns that session's key.
 */
export const redeemReceipt = (options: {
  readonly attemptId: string
  readonly provider: ProviderId
  readonly receipt: string
  readonly sessionId: string
}): Effect.Effect<Option.Option<string>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ session_key: string }>`
      WITH redeemed AS (
        UPDATE sign_in_attempts SET receipt_used_at = now()
        WHERE id = ${options.attemptId} AND provider_id = ${options.provider}
          AND receipt_digest = ${digestOf(options.receipt)} AND receipt_used_at IS NULL
          AND receipt_expires_at > now() AND session_id = ${options.sessionId}
        RETURNING session_id
      )
      SELECT s.session_key FROM redeemed r JOIN sessions s ON s.id = r.session_id
    `
    return Option.fromNullable(rows[0]?.session_key)
  }).pipe(Effect.withSpan("SignInAttempts.redeemReceipt"))
