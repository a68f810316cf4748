import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Credential sources (SPEC 2.10, 3, 4.6; DESIGN §13). A source is recorded `registering` before
 * the Credential Gateway is called, becomes `ready` when the gateway accepts it and `deleting`
 * when the call ends without an answer or on DELETE; the worker's sweep removes `deleting` ones
 * from the gateway and then here. `state_changed_at` lets the sweep time out a registration an
 * interrupted request left behind. `credential_source_secret_refs` pins the Secrets a source
 * was registered from (foreign keys), so they cannot be deleted while the source exists.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE credential_sources (
      id               text PRIMARY KEY,
      namespace_id     text NOT NULL REFERENCES namespaces (id),
      name             text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      type             text NOT NULL,
      config           jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(config) = 'object'),
      state            text NOT NULL CHECK (state IN ('registering', 'ready', 'deleting')),
      state_changed_at timestamptz NOT NULL DEFAULT now(),
      created_at       timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX credential_sources_namespace ON credential_sources (namespace_id, id)`
  yield* sql`CREATE INDEX credential_sources_unsettled ON credential_sources (state, state_changed_at) WHERE state <> 'ready'`
  yield* sql`
    CREATE TABLE credential_source_secret_refs (
      source_id text NOT NULL REFERENCES credential_sources (id) ON DELETE CASCADE,
      field     text NOT NULL,
      secret_id text NOT NULL REFERENCES secrets (id),
      PRIMARY KEY (source_id, field)
    )
  `
  yield* sql`CREATE INDEX credential_source_secret_refs_secret ON credential_source_secret_refs (secret_id)`
})
