import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Repository sessions of the credential service (SPEC 2.14, 4.8; DESIGN §12). One row per
 * admitted session, keyed by its admission id so a repeated admission finds it. The bearer is
 * kept only as a SHA-256 digest. `state`: `active`, `CLOSED` (local authority stopped; token
 * revocation may still be pending) and `DISPOSED` (every obligation settled). Expiry is judged
 * by `deadline` against the database clock. `token_expires_at` is the latest expiry of an
 * installation token minted for the session by any replica: until then a token a crashed
 * replica held may still be valid upstream.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE repository_sessions (
      id                   text PRIMARY KEY,
      admission_id         text NOT NULL UNIQUE,
      request_digest       text NOT NULL,
      bearer_digest        text NOT NULL UNIQUE,
      namespace_id         text NOT NULL,
      repository_ref       text NOT NULL,
      repository_id        text NOT NULL,
      repository           text NOT NULL,
      provider_instance_id text NOT NULL,
      grant_id             text NOT NULL,
      profile              text NOT NULL,
      push_ref_allowlist   jsonb,
      state                text NOT NULL CHECK (state IN ('active', 'CLOSED', 'DISPOSED')),
      deadline             timestamptz NOT NULL,
      created_at           timestamptz NOT NULL DEFAULT now(),
      closed_at            timestamptz,
      token_expires_at     timestamptz,
      tokens_settled_at    timestamptz,
      disposed_at          timestamptz
    )
  `
  yield* sql`CREATE INDEX repository_sessions_open ON repository_sessions (state) WHERE state <> 'DISPOSED'`
})
