import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Agent provisioning records (SPEC 2.13, 4.4; docs/decisions/agent-provisioning.md).
 *
 * - `id` is the public `workId` (`wrk_<uuidv4>`); its work is the `agent.provision` work item
 *   keyed by it (a retry adds a new item with the same key), whose state is the record's status.
 * - `request_id` is the caller's idempotency key, unique per Namespace; `body_digest` is the
 *   SHA-256 of the canonical request body, compared on a repeat.
 * - `request` is the admitted request the worker carries out (Secret references only, never a
 *   Secret value); it is cleared at handoff.
 * - `agent_id` and `configuration_id` are recorded in the transaction that creates each, which is
 *   what makes the phases resumable without creating twice. They are plain ids, not foreign
 *   keys: the record outlives a later deletion of the Agent or the Configuration.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_provisioning (
      id                     text PRIMARY KEY,
      namespace_id           text NOT NULL REFERENCES namespaces (id),
      request_id             text NOT NULL,
      body_digest            text NOT NULL CHECK (body_digest ~ '^[0-9a-f]{64}$'),
      initiator_principal_id text NOT NULL,
      request                jsonb CHECK (request IS NULL OR jsonb_typeof(request) = 'object'),
      phase                  text NOT NULL DEFAULT 'admitted' CHECK (phase IN ('admitted', 'configuration', 'transport', 'handoff')),
      agent_id               text,
      configuration_id       text,
      completed_at           timestamptz,
      created_at             timestamptz NOT NULL DEFAULT now(),
      updated_at             timestamptz NOT NULL DEFAULT now(),
      UNIQUE (namespace_id, request_id)
    )
  `
  yield* sql`CREATE INDEX agent_provisioning_namespace ON agent_provisioning (namespace_id, id)`
})
