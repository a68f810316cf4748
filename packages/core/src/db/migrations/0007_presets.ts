import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Presets (DESIGN §7): a named, reusable template of Agent launch settings per Namespace. The
 * template is admitted by the API (shape, placeholders, 1 MiB, depth 64) and stored as jsonb.
 * A name is unique among a Namespace's Presets. (0006 is the Configurations migration.)
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE presets (
      id           text PRIMARY KEY,
      namespace_id text NOT NULL REFERENCES namespaces (id),
      name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      template     jsonb NOT NULL CHECK (jsonb_typeof(template) = 'object'),
      created_at   timestamptz NOT NULL DEFAULT now(),
      updated_at   timestamptz NOT NULL DEFAULT now(),
      UNIQUE (namespace_id, name)
    )
  `
})
