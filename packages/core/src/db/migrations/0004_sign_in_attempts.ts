import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * External sign-in attempts (SPEC 4.1 `start` / `callback` / `result`): the server-side state of
 * one OAuth 2 authorization-code flow with PKCE, from `start` to the one-use result receipt.
 *
 * - `state_digest`, `binding_digest` and `receipt_digest` are SHA-256 digests; the plaintexts
 *   live only in the authorization URL and in the browser's cookies.
 * - `code_verifier` is needed in plaintext for the token request; it is erased when the callback
 *   consumes the attempt (one use), and an unconsumed attempt is useless after `expires_at`.
 * - `session_id` and `receipt_digest` are set together when the callback issued a session.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sign_in_attempts (
      id                 text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{43}$'),
      provider_id        text NOT NULL CHECK (provider_id IN ('codehost', 'idprovider')),
      state_digest       bytea NOT NULL UNIQUE,
      binding_digest     bytea NOT NULL,
      code_verifier      text,
      nonce              text,
      created_at         timestamptz NOT NULL DEFAULT now(),
      expires_at         timestamptz NOT NULL,
      consumed_at        timestamptz,
      session_id         text REFERENCES sessions (id),
      receipt_digest     bytea UNIQUE,
      receipt_expires_at timestamptz,
      receipt_used_at    timestamptz,
      CHECK ((consumed_at IS NULL) = (code_verifier IS NOT NULL)),
      CHECK ((session_id IS NULL) = (receipt_digest IS NULL)),
      CHECK ((receipt_digest IS NULL) = (receipt_expires_at IS NULL))
    )
  `
  yield* sql`CREATE INDEX sign_in_attempts_expires ON sign_in_attempts (expires_at)`
})
