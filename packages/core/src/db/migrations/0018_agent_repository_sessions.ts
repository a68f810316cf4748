import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The worker's record of the repository sessions it opens for Agents (SPEC 1.4, 2.14, 4.8;
 * docs/decisions/repository-credentials.md, "Worker"). One row per admission, written before the
 * credential service is asked, so a worker that crashes mid-deploy finds the admission id again
 * and recovers the session instead of opening a second one. `state`: `opening` (admission sent,
 * outcome unknown), `open` (the client material holds the bearer), `closing` (stop, redeploy,
 * deletion, a failed deployment or expiry: `repository.cleanup` closes and disposes it, then
 * deletes the row). At most one `opening` or `open` row per (revision, grant). No foreign key to
 * the Agent: its sessions must still be cleaned up after it is removed. The bearer is never here.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_repository_sessions (
      admission_id   text PRIMARY KEY,
      namespace_id   text NOT NULL,
      agent_id       text NOT NULL,
      revision_id    text NOT NULL,
      grant_index    integer NOT NULL CHECK (grant_index BETWEEN 0 AND 15),
      grant_body     jsonb NOT NULL,
      session_id     text,
      state          text NOT NULL CHECK (state IN ('opening', 'open', 'closing')),
      deadline       timestamptz,
      created_at     timestamptz NOT NULL DEFAULT now(),
      state_changed_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE UNIQUE INDEX agent_repository_sessions_live ON agent_repository_sessions (revision_id, grant_index)
    WHERE state IN ('opening', 'open')
  `
  yield* sql`CREATE INDEX agent_repository_sessions_agent ON agent_repository_sessions (agent_id, revision_id)`
})
