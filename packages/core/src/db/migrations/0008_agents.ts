import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Agents, their immutable revisions and what they reference (SPEC 2.4-2.7, 3).
 *
 * - `agents.settings` holds the saved draft's structured settings (`harnessAuth`, `plugins`,
 *   `pluginApprovers`, `repositoryBindings`, `repositoryAccess`) as admitted; each is decoded
 *   on read, and one that no longer decodes is reported as `configurationReadError` instead of
 *   failing the read (SPEC 2.4).
 * - Each Agent owns one `agent` principal (`service_principal_id`), created with it and deleted
 *   with it; its name is unique among the Namespace's live Agents and released on deletion.
 * - `agent_secret_refs` and `agent_revision_secret_refs` pin the Secrets a draft or a revision
 *   uses (foreign keys), so a Secret in use cannot disappear under a running gateway.
 * - `agent_initial_files` stages `initialWorkspaceFiles` privately until the first activation.
 * - A revision's deployment is the work item `agent.deploy` keyed by the revision id; the
 *   revision row keeps what the work item cannot: the safe error data and warnings.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agents (
      id                    text PRIMARY KEY,
      namespace_id          text NOT NULL REFERENCES namespaces (id),
      name                  text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      configuration_id      text NOT NULL REFERENCES configurations (id),
      service_principal_id  text NOT NULL UNIQUE REFERENCES principals (id),
      execution_mode        text NOT NULL CHECK (execution_mode IN ('embedded', 'dedicated')),
      backend_id            text,
      settings              jsonb NOT NULL DEFAULT '{}'::jsonb,
      workspace_defaults_id text,
      status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deleting')),
      desired_runtime_state text NOT NULL DEFAULT 'stopped' CHECK (desired_runtime_state IN ('running', 'stopped')),
      active_revision_id    text,
      deletion_initiator    text,
      created_at            timestamptz NOT NULL DEFAULT now(),
      updated_at            timestamptz NOT NULL DEFAULT now(),
      UNIQUE (namespace_id, name)
    )
  `
  yield* sql`CREATE INDEX agents_namespace ON agents (namespace_id, id)`
  yield* sql`CREATE INDEX agents_configuration ON agents (configuration_id)`
  yield* sql`
    CREATE TABLE agent_secret_refs (
      agent_id  text NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      secret_id text NOT NULL REFERENCES secrets (id),
      PRIMARY KEY (agent_id, secret_id)
    )
  `
  yield* sql`CREATE INDEX agent_secret_refs_secret ON agent_secret_refs (secret_id)`
  yield* sql`
    CREATE TABLE agent_initial_files (
      agent_id   text PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
      files      jsonb NOT NULL CHECK (jsonb_typeof(files) = 'object'),
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE agent_revisions (
      id                       text PRIMARY KEY,
      agent_id                 text NOT NULL REFERENCES agents (id),
      namespace_id             text NOT NULL REFERENCES namespaces (id),
      configuration_id         text NOT NULL REFERENCES configurations (id),
      configuration_generation bigint NOT NULL CHECK (configuration_generation BETWEEN 1 AND 9007199254740991),
      snapshot                 jsonb NOT NULL CHECK (jsonb_typeof(snapshot) = 'object'),
      error                    jsonb,
      warnings                 jsonb NOT NULL DEFAULT '[]'::jsonb,
      retired_at               timestamptz,
      created_at               timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX agent_revisions_agent ON agent_revisions (agent_id, id)`
  yield* sql`CREATE INDEX agent_revisions_configuration ON agent_revisions (configuration_id)`
  yield* sql`
    ALTER TABLE agents ADD CONSTRAINT agents_active_revision
      FOREIGN KEY (active_revision_id) REFERENCES agent_revisions (id) DEFERRABLE INITIALLY DEFERRED
  `
  yield* sql`
    CREATE TABLE agent_revision_secret_refs (
      revision_id text NOT NULL REFERENCES agent_revisions (id) ON DELETE CASCADE,
      secret_id   text NOT NULL REFERENCES secrets (id),
      PRIMARY KEY (revision_id, secret_id)
    )
  `
  yield* sql`CREATE INDEX agent_revision_secret_refs_secret ON agent_revision_secret_refs (secret_id)`
})
