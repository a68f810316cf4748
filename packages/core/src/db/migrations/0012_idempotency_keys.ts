import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Idempotent writes (DESIGN §18): one row per caller principal and `Idempotency-Key`. The row
 * is inserted before the handler acts, as a reservation under the unique key; `status` stays
 * null while that first request is in flight and then holds its stored response. A response
 * that bears a secret is stored without its body (`response_body` null, `withheld` true).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE idempotency_keys (
      principal_id  text NOT NULL,
      key           text NOT NULL,
      method        text NOT NULL,
      path          text NOT NULL,
      body_digest   text NOT NULL,
      status        integer,
      response_body jsonb,
      withheld      boolean NOT NULL DEFAULT false,
      created_at    timestamptz NOT NULL DEFAULT now(),
      expires_at    timestamptz NOT NULL,
      PRIMARY KEY (principal_id, key)
    )
  `
  yield* sql`CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at)`
})
