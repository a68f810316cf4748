import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Configurations (SPEC 2.8): a Namespace's native runtime configuration documents. `generation`
 * counts saves (each PATCH adds one, up to 2^53 - 1). `secret_bindings` keeps the bindings as
 * admitted; `configuration_secret_refs` holds one row per bound Secret so the database itself
 * refuses to delete a bound Secret (the foreign key) and a Secret's referrers are one index
 * lookup away.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE configurations (
      id              text PRIMARY KEY,
      namespace_id    text NOT NULL REFERENCES namespaces (id),
      kind            text NOT NULL CHECK (kind = 'agent'),
      generation      bigint NOT NULL CHECK (generation BETWEEN 1 AND 9007199254740991),
      "values"        jsonb NOT NULL CHECK (jsonb_typeof("values") = 'object'),
      secret_bindings jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(secret_bindings) = 'object'),
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX configurations_namespace ON configurations (namespace_id, id)`
  yield* sql`
    CREATE TABLE configuration_secret_refs (
      configuration_id text NOT NULL REFERENCES configurations (id) ON DELETE CASCADE,
      secret_id        text NOT NULL REFERENCES secrets (id),
      PRIMARY KEY (configuration_id, secret_id)
    )
  `
  yield* sql`CREATE INDEX configuration_secret_refs_secret ON configuration_secret_refs (secret_id)`
})
