/**
 * The `agent_repository_sessions` table (migration 0018): which repository sessions the worker
 * opened for which Agent revision and grant, durably, so a crashed deploy recovers its admission
 * and no session is ever lost track of. Time is judged by the database clock.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

export const AgentRepositorySessionState = Schema.Literal("opening", "open", "closing")

export const AgentRepositorySessionRow = Schema.Struct({
  admission_id: Schema.String,
  namespace_id: Schema.String,
  agent_id: Schema.String,
  revision_id: Schema.String,
  grant_index: Schema.Number,
  grant_body: Schema.Unknown,
  session_id: Schema.NullOr(Schema.String),
  state: AgentRepositorySessionState
})
export type AgentRepositorySessionRow = typeof AgentRepositorySessionRow.Type

const Opening = Schema.Struct({
  admission_id: Schema.String,
  namespace_id: Schema.String,
  agent_id: Schema.String,
  revision_id: Schema.String,
  grant_index: Schema.Number,
  grant_body: Schema.Unknown
})
const Opened = Schema.Struct({ admission_id: Schema.String, session_id: Schema.String, deadline_ms: Schema.Number })
const Retire = Schema.Struct({ agent_id: Schema.String, keep_revision_id: Schema.NullOr(Schema.String) })
const Admission = Schema.Struct({ admission_id: Schema.String })

export class AgentRepositorySessionsRepo extends Effect.Service<AgentRepositorySessionsRepo>()("@svc/core/AgentRepositorySessionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`admission_id, namespace_id, agent_id, revision_id, grant_index, grant_body, session_id, state`

    /**
     * A session is renewed once it is within a third of its life (at most five minutes) of its
     * deadline: open rows then count as `expiring`.
     */
    const expiring = sql`(state = 'open' AND now() >= deadline - least(interval '5 minutes', (deadline - state_changed_at) / 3))`

    /** The revision's sessions that are opening or open, by grant. */
    const live = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ ...AgentRepositorySessionRow.fields, expiring: Schema.Boolean }),
      execute: (revisionId) => sql`
        SELECT ${columns}, coalesce(${expiring}, false) AS expiring FROM agent_repository_sessions
        WHERE revision_id = ${revisionId} AND state IN ('opening', 'open') ORDER BY grant_index
      `
    })

    /** The Agent's revisions with a session opening or open. */
    const liveRevisions = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ revision_id: Schema.String }),
      execute: (agentId) => sql`
        SELECT DISTINCT revision_id FROM agent_repository_sessions WHERE agent_id = ${agentId} AND state IN ('opening', 'open')
      `
    })

    /** Agents whose running revision has a session to renew, or an admission left unfinished (a renewal cut short). */
    const renewable = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ namespace_id: Schema.String, agent_id: Schema.String }),
      execute: () => sql`
        SELECT DISTINCT s.namespace_id, s.agent_id FROM agent_repository_sessions s
        JOIN agents a ON a.id = s.agent_id AND a.active_revision_id = s.revision_id
        WHERE a.status = 'active' AND a.desired_runtime_state = 'running' AND (${expiring} OR s.state = 'opening')
      `
    })

    const byAdmission = SqlSchema.findOne({
      Request: Schema.String,
      Result: AgentRepositorySessionRow,
      execute: (admissionId) => sql`SELECT ${columns} FROM agent_repository_sessions WHERE admission_id = ${admissionId}`
    })

    /** Recorded before the credential service is asked; committed on its own. */
    const insertOpening = SqlSchema.void({
      Request: Opening,
      execute: (row) => sql`
        INSERT INTO agent_repository_sessions (admission_id, namespace_id, agent_id, revision_id, grant_index, grant_body, state)
        VALUES (${row.admission_id}, ${row.namespace_id}, ${row.agent_id}, ${row.revision_id}, ${row.grant_index},
          ${JSON.stringify(row.grant_body)}::jsonb, 'opening')
      `
    })

    /** The client material holds the session's bearer now. */
    const markOpen = SqlSchema.void({
      Request: Opened,
      execute: (row) => sql`
        UPDATE agent_repository_sessions
        SET state = 'open', session_id = ${row.session_id}, state_changed_at = now(),
          deadline = to_timestamp(${row.deadline_ms}::double precision / 1000)
        WHERE admission_id = ${row.admission_id} AND state = 'opening'
      `
    })

    const Closing = Schema.Struct({ admission_id: Schema.String, session_id: Schema.NullOr(Schema.String), revision_id: Schema.String })
    const closingColumns = sql`admission_id, session_id, revision_id`

    /** One admission to close (a recovered session whose bearer was lost); a session id when known. */
    const retireAdmission = SqlSchema.findAll({
      Request: Schema.Struct({ admission_id: Schema.String, session_id: Schema.NullOr(Schema.String) }),
      Result: Closing,
      execute: (req) => sql`
        UPDATE agent_repository_sessions
        SET state = 'closing', session_id = coalesce(${req.session_id}, session_id), state_changed_at = now()
        WHERE admission_id = ${req.admission_id} AND state <> 'closing'
        RETURNING ${closingColumns}
      `
    })

    /**
     * Every session of the Agent except those of `keep_revision_id` and, while the Agent is
     * active and desired running, of its latest revision (a deployment admitted meanwhile keeps
     * its own). Read in the same statement, so a later deployment's sessions are never taken.
     */
    const retireAgent = SqlSchema.findAll({
      Request: Retire,
      Result: Closing,
      execute: (req) => sql`
        UPDATE agent_repository_sessions SET state = 'closing', state_changed_at = now()
        WHERE agent_id = ${req.agent_id} AND state <> 'closing'
          AND revision_id IS DISTINCT FROM ${req.keep_revision_id}::text
          AND revision_id IS DISTINCT FROM (
            SELECT r.id FROM agent_revisions r JOIN agents a ON a.id = r.agent_id
            WHERE r.agent_id = ${req.agent_id} AND a.status = 'active' AND a.desired_runtime_state = 'running'
            ORDER BY r.created_at DESC, r.id DESC LIMIT 1
          )
        RETURNING ${closingColumns}
      `
    })

    /** Every session of one revision (its deployment failed for good). */
    const retireRevision = SqlSchema.findAll({
      Request: Schema.String,
      Result: Closing,
      execute: (revisionId) => sql`
        UPDATE agent_repository_sessions SET state = 'closing', state_changed_at = now()
        WHERE revision_id = ${revisionId} AND state <> 'closing'
        RETURNING ${closingColumns}
      `
    })

    /**
     * Sessions nobody needs any more that no reconciler retired (a deployment that ran out of
     * time, a crash between activation and retirement, an expired session): expired, or of a
     * revision that is not its Agent's running revision while no deployment of it is unfinished.
     */
    const retireOrphans = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Closing,
      execute: () => sql`
        UPDATE agent_repository_sessions s SET state = 'closing', state_changed_at = now()
        WHERE s.state <> 'closing' AND (
          s.deadline <= now()
          OR (
            NOT EXISTS (
              SELECT 1 FROM agents a WHERE a.id = s.agent_id AND a.status = 'active'
                AND a.desired_runtime_state = 'running' AND a.active_revision_id = s.revision_id
            )
            AND NOT EXISTS (
              SELECT 1 FROM work_items w WHERE w.kind = 'agent.deploy' AND w.key = s.revision_id
                AND w.state IN ('queued', 'running')
            )
          )
        )
        RETURNING ${closingColumns}
      `
    })

    /** Rows left `closing` (their cleanup item may have failed for good): queued again by the sweep. */
    const closing = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Admission,
      execute: () => sql`SELECT admission_id FROM agent_repository_sessions WHERE state = 'closing' ORDER BY state_changed_at LIMIT 256`
    })

    const remove = SqlSchema.void({
      Request: Schema.String,
      execute: (admissionId) => sql`DELETE FROM agent_repository_sessions WHERE admission_id = ${admissionId} AND state = 'closing'`
    })

    return {
      live: (revisionId: string) => live(revisionId),
      renewable: renewable(undefined),
      liveRevisions: (agentId: string) => Effect.map(liveRevisions(agentId), (rows) => rows.map((row) => row.revision_id)),
      byAdmission: (admissionId: string) => byAdmission(admissionId),
      insertOpening: (row: typeof Opening.Type) => insertOpening(row),
      markOpen: (row: typeof Opened.Type) => markOpen(row),
      retireAdmission: (admissionId: string, sessionId: string | null) =>
        retireAdmission({ admission_id: admissionId, session_id: sessionId }),
      retireAgent: (agentId: string, keepRevisionId: string | null) => retireAgent({ agent_id: agentId, keep_revision_id: keepRevisionId }),
      retireRevision: (revisionId: string) => retireRevision(revisionId),
      retireOrphans: retireOrphans(undefined),
      closing: closing(undefined),
      remove: (admissionId: string) => remove(admissionId)
    }
  })
}) {}
