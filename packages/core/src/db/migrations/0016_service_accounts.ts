import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Service accounts (SPEC 2.11, 4.5; DESIGN §13).
 *
 * - A native account (`backend_id` NULL) may hold one `api_key` reference to a Secret of its
 *   Namespace (`credential_secret_id`, a foreign key, so the Secret cannot vanish under it).
 * - A Backend-managed account names its upstream account deterministically (`upstream_name`,
 *   `<name>-<id>`), recorded `creating` before the upstream call so a lost answer can be adopted;
 *   `ready` once linked; `deleting` while the upstream credential, the sealed record and the
 *   upstream account are removed, in that order, before the row.
 * - `service_account_credentials` is the account-owned sealed record of the issued
 *   `access_token` (keys `token` and `workspace-id`, sealed together by the Secret Driver); it is
 *   never a public Secret and no query of the API returns its columns.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE service_accounts (
      id                     text PRIMARY KEY,
      namespace_id           text NOT NULL REFERENCES namespaces (id),
      name                   text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      backend_id             text,
      upstream_name          text,
      upstream_account_id    text,
      state                  text NOT NULL CHECK (state IN ('creating', 'ready', 'deleting')),
      credential_kind        text CHECK (credential_kind IN ('api_key', 'oauth_access_token', 'access_token')),
      credential_secret_id   text REFERENCES secrets (id),
      credential_secret_key  text,
      credential_upstream_id text,
      credential_issued_at   timestamptz,
      credential_expires_at  timestamptz,
      created_at             timestamptz NOT NULL DEFAULT now(),
      updated_at             timestamptz NOT NULL DEFAULT now(),
      CHECK ((backend_id IS NULL) = (upstream_name IS NULL)),
      CHECK (backend_id IS NOT NULL OR state = 'ready'),
      CHECK ((credential_kind = 'access_token') = (credential_upstream_id IS NOT NULL)),
      CHECK ((credential_kind = 'api_key') = (credential_secret_id IS NOT NULL))
    )
  `
  yield* sql`CREATE INDEX service_accounts_namespace ON service_accounts (namespace_id, id)`
  yield* sql`CREATE INDEX service_accounts_secret ON service_accounts (credential_secret_id) WHERE credential_secret_id IS NOT NULL`
  yield* sql`
    CREATE TABLE service_account_credentials (
      service_account_id text PRIMARY KEY REFERENCES service_accounts (id),
      driver             text NOT NULL,
      key_id             text NOT NULL,
      nonce              bytea NOT NULL CHECK (octet_length(nonce) = 12),
      ciphertext         bytea NOT NULL,
      tag                bytea NOT NULL CHECK (octet_length(tag) = 16),
      created_at         timestamptz NOT NULL DEFAULT now()
    )
  `
})
