import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Failed password sign-ins, for the SPEC 5.4 throttle. Kept in PostgreSQL so every API replica
 * counts the same failures. The email is stored only as a SHA-256 digest of its normalized
 * form (people type passwords into the email field). Rows older than the window are pruned
 * by the API as it records new ones (docs/decisions/identity.md).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE sign_in_failures (
      id             bigserial PRIMARY KEY,
      email_digest   bytea NOT NULL,
      client_address text,
      at             timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX sign_in_failures_email ON sign_in_failures (email_digest, at)`
  yield* sql`CREATE INDEX sign_in_failures_address ON sign_in_failures (client_address, at) WHERE client_address IS NOT NULL`
  yield* sql`CREATE INDEX sign_in_failures_at ON sign_in_failures (at)`
})
