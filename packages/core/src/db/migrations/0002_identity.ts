import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The Installation singleton, Namespaces (their identity; the tenancy capability adds the rest),
 * principals, human accounts and their sign-in methods, sessions, service keys, IAM Roles,
 * AccessBindings and Restrictions, and the audit trail (DESIGN §6, SPEC 5).
 *
 * Secrets are stored only as argon2id hashes (passwords) or SHA-256 digests (session tokens,
 * service keys).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE installation (
      singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      id              text NOT NULL UNIQUE,
      bootstrapped_at timestamptz NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE namespaces (
      id                 text PRIMARY KEY,
      name               text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      status             text NOT NULL CHECK (status IN ('provisioning', 'ready', 'failed', 'deleting', 'deleted')),
      existing_namespace text,
      created_at         timestamptz NOT NULL DEFAULT now(),
      updated_at         timestamptz NOT NULL DEFAULT now()
    )
  `
  // A deleted Namespace keeps a tombstone (SPEC 3); its name may be used again.
  yield* sql`CREATE UNIQUE INDEX namespaces_live_name ON namespaces (name) WHERE status <> 'deleted'`
  yield* sql`
    CREATE TABLE principals (
      id           text PRIMARY KEY,
      kind         text NOT NULL CHECK (kind IN ('human', 'service', 'agent')),
      namespace_id text REFERENCES namespaces (id),
      name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      created_at   timestamptz NOT NULL DEFAULT now(),
      deleted_at   timestamptz,
      CHECK (kind <> 'human' OR namespace_id IS NULL)
    )
  `
  yield* sql`
    CREATE TABLE accounts (
      id           text PRIMARY KEY,
      principal_id text NOT NULL UNIQUE REFERENCES principals (id),
      email        text NOT NULL UNIQUE CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 320),
      name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      disabled     boolean NOT NULL DEFAULT false,
      revoked_at   timestamptz,
      enrolled_at  timestamptz,
      version      integer NOT NULL DEFAULT 1 CHECK (version BETWEEN 1 AND 2147483647),
      created_at   timestamptz NOT NULL DEFAULT now(),
      updated_at   timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE account_methods (
      id            text PRIMARY KEY,
      account_id    text NOT NULL REFERENCES accounts (id),
      provider_id   text NOT NULL CHECK (provider_id IN ('password', 'codehost', 'idprovider')),
      subject       text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 320),
      password_hash text,
      created_at    timestamptz NOT NULL DEFAULT now(),
      UNIQUE (provider_id, subject),
      CHECK ((provider_id = 'password') = (password_hash IS NOT NULL))
    )
  `
  yield* sql`CREATE INDEX account_methods_account ON account_methods (account_id)`
  yield* sql`
    CREATE TABLE recovery_designation (
      singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      account_id text NOT NULL REFERENCES accounts (id),
      method_id  text NOT NULL REFERENCES account_methods (id),
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE sessions (
      id           text PRIMARY KEY,
      token_digest bytea NOT NULL UNIQUE,
      session_key  text NOT NULL UNIQUE,
      account_id   text NOT NULL REFERENCES accounts (id),
      created_at   timestamptz NOT NULL DEFAULT now(),
      expires_at   timestamptz NOT NULL,
      revoked_at   timestamptz
    )
  `
  yield* sql`CREATE INDEX sessions_account ON sessions (account_id) WHERE revoked_at IS NULL`
  yield* sql`
    CREATE TABLE service_keys (
      id                   text PRIMARY KEY,
      service_principal_id text NOT NULL REFERENCES principals (id),
      namespace_id         text REFERENCES namespaces (id),
      name                 text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 32),
      digest               bytea NOT NULL UNIQUE,
      expires_at           timestamptz NOT NULL,
      revoked_at           timestamptz,
      issued_by            text REFERENCES principals (id),
      created_at           timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE roles (
      id           text PRIMARY KEY,
      namespace_id text REFERENCES namespaces (id),
      name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      permissions  text[] NOT NULL,
      builtin      boolean NOT NULL DEFAULT false,
      created_at   timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE UNIQUE INDEX roles_name ON roles (coalesce(namespace_id, ''), name)`
  yield* sql`
    CREATE TABLE access_bindings (
      id            text PRIMARY KEY,
      principal_id  text NOT NULL REFERENCES principals (id),
      role_id       text NOT NULL REFERENCES roles (id),
      resource_kind text NOT NULL,
      resource_id   text NOT NULL,
      namespace_id  text REFERENCES namespaces (id),
      created_at    timestamptz NOT NULL DEFAULT now()
    )
  `
  // A decision reads only the bindings of one principal: its cost does not grow with the
  // number of principals or bindings in the Installation.
  yield* sql`CREATE INDEX access_bindings_principal ON access_bindings (principal_id, resource_kind, resource_id)`
  yield* sql`CREATE INDEX access_bindings_role ON access_bindings (role_id)`
  yield* sql`CREATE INDEX access_bindings_namespace ON access_bindings (namespace_id)`
  yield* sql`
    CREATE TABLE restrictions (
      id            text PRIMARY KEY,
      principal_id  text NOT NULL REFERENCES principals (id),
      permission    text NOT NULL,
      resource_kind text NOT NULL,
      resource_id   text NOT NULL,
      created_at    timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX restrictions_principal ON restrictions (principal_id)`
  yield* sql`
    CREATE TABLE audit_events (
      id                 bigserial PRIMARY KEY,
      at                 timestamptz NOT NULL DEFAULT now(),
      kind               text NOT NULL,
      outcome            text NOT NULL CHECK (outcome IN ('success', 'failure', 'denied')),
      actor_principal_id text,
      request_id         text,
      namespace_id       text,
      resource_kind      text,
      resource_id        text,
      details            jsonb NOT NULL DEFAULT '{}'::jsonb
    )
  `
  yield* sql`CREATE INDEX audit_events_at ON audit_events (at)`
  yield* sql`CREATE INDEX audit_events_resource ON audit_events (resource_kind, resource_id)`
})
