import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Secrets (DESIGN §7): a named value per Namespace, stored only as AES-256-GCM ciphertext sealed
 * by the Secret Driver (`driver`), with its nonce, tag and the id of the key that sealed it.
 * A name is unique among a Namespace's Secrets.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE secrets (
      id           text PRIMARY KEY,
      namespace_id text NOT NULL REFERENCES namespaces (id),
      name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      driver       text NOT NULL,
      key_id       text NOT NULL,
      nonce        bytea NOT NULL CHECK (octet_length(nonce) = 12),
      ciphertext   bytea NOT NULL,
      tag          bytea NOT NULL CHECK (octet_length(tag) = 16),
      created_at   timestamptz NOT NULL DEFAULT now(),
      updated_at   timestamptz NOT NULL DEFAULT now(),
      UNIQUE (namespace_id, name)
    )
  `
})
