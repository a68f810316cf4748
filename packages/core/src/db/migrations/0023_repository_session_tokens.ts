import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One row per installation token minted for a repository session, by whichever replica (never the
 * token itself: only the process that holds a token can revoke it, so the row records that it
 * exists, until when, and whether its holder revoked it). 0015 kept only the latest expiry per
 * session, which could not tell a token the closing replica revoked from one another replica
 * still held, so a close settled cleanup while a token stayed live upstream. A session's tokens
 * are settled once each row is revoked or past its expiry plus the provider clock skew
 * allowance. An expiry 0015 recorded for a session not yet settled becomes a row of a token
 * nobody is known to hold, so it stays pending as before.
 *
 * `token_expires_at` stays: credential-service replicas of the previous release still write it
 * during a rolling upgrade, and settling still honours it (a later release can drop it).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE repository_session_tokens (
      id          text PRIMARY KEY,
      session_id  text NOT NULL REFERENCES repository_sessions (id) ON DELETE CASCADE,
      expires_at  timestamptz NOT NULL,
      revoked_at  timestamptz,
      created_at  timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX repository_session_tokens_session ON repository_session_tokens (session_id)`
  yield* sql`
    INSERT INTO repository_session_tokens (id, session_id, expires_at)
    SELECT 'legacy-' || id, id, token_expires_at FROM repository_sessions
    WHERE token_expires_at IS NOT NULL AND tokens_settled_at IS NULL
  `
})
