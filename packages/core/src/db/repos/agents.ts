/**
 * The `agents` table (with `agent_initial_files`, which only an Agent owns), shared by the API
 * and the worker's reconcilers; `agent_secret_refs` is written by `@svc/core/tenancy`'s
 * `pinAgentSecrets`, beside `insertAgent`. Rows are decoded with their schema (branded ids,
 * dates), so no caller casts. Every method runs on the client taken once; inside
 * `sql.withTransaction` it joins the caller's transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { deleteBindingsWhere } from "./bindings.js"
import { AGENT_DEPLOY } from "../../tenancy/agents.js"
import { AgentId, ConfigurationId, NamespaceId, RevisionId, ServicePrincipalId } from "../../schema/ids.js"

export const AgentStatusColumn = Schema.Literal("active", "deleting")
export const DesiredRuntimeState = Schema.Literal("running", "stopped")

export const AgentRow = Schema.Struct({
  id: AgentId,
  namespace_id: NamespaceId,
  name: Schema.String,
  configuration_id: ConfigurationId,
  service_principal_id: ServicePrincipalId,
  execution_mode: Schema.Literal("embedded", "dedicated"),
  backend_id: Schema.NullOr(Schema.String),
  /** The saved draft's settings as admitted; each is decoded on read (`readSavedSettings`). */
  settings: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  workspace_defaults_id: Schema.NullOr(Schema.String),
  status: AgentStatusColumn,
  desired_runtime_state: DesiredRuntimeState,
  active_revision_id: Schema.NullOr(RevisionId),
  deletion_initiator: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type AgentRow = typeof AgentRow.Type

/** What the reconcilers decide on: the Agent's state and its newest revision. */
export const AgentStateRow = Schema.Struct({
  status: AgentStatusColumn,
  desired_runtime_state: DesiredRuntimeState,
  active_revision_id: Schema.NullOr(RevisionId),
  latest_revision_id: Schema.NullOr(RevisionId),
  /** Who started the deletion (the actor of teardown audits); null unless deleting. */
  deletion_initiator: Schema.NullOr(Schema.String)
})
export type AgentStateRow = typeof AgentStateRow.Type

/** What recovery decides on: the Agent's state and whether a deployment of it is in flight. */
export const RecoveryStateRow = Schema.Struct({
  status: AgentStatusColumn,
  desired_runtime_state: DesiredRuntimeState,
  active_revision_id: Schema.NullOr(RevisionId),
  deploying: Schema.Boolean
})
export type RecoveryStateRow = typeof RecoveryStateRow.Type

/** An Agent that should be running its active revision (the recovery sweep's list). */
export const WantedRunningRow = Schema.Struct({ id: AgentId, namespace_id: NamespaceId, active_revision_id: RevisionId })

const AgentKey = Schema.Struct({ id: AgentId, namespace_id: NamespaceId })
const AgentPage = Schema.Struct({ namespace_id: NamespaceId, after: Schema.optional(Schema.String), limit: Schema.Int })
const UpdateDraft = Schema.Struct({
  id: AgentId,
  configuration_id: ConfigurationId,
  execution_mode: Schema.Literal("embedded", "dedicated"),
  backend_id: Schema.NullOr(Schema.String),
  settings: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
const MarkDeleting = Schema.Struct({ id: AgentId, deletion_initiator: Schema.String })
const AgentName = Schema.Struct({ namespace_id: NamespaceId, name: Schema.String })
const Activation = Schema.Struct({ id: AgentId, revision_id: RevisionId })
const StagedFiles = Schema.Struct({ files: Schema.Record({ key: Schema.String, value: Schema.String }) })
const Removable = Schema.Struct({ service_principal_id: ServicePrincipalId, name: Schema.String })

export class AgentsRepo extends Effect.Service<AgentsRepo>()("@svc/core/AgentsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(`a.id, a.namespace_id, a.name, a.configuration_id, a.service_principal_id, a.execution_mode,
  a.backend_id, a.settings, a.workspace_defaults_id, a.status, a.desired_runtime_state, a.active_revision_id,
  a.deletion_initiator, a.created_at, a.updated_at`)

    /** The Agent under its Namespace (a deleted Namespace's tombstone hides it), optionally locked. */
    const findLive = (lock: boolean) =>
      SqlSchema.findOne({
        Request: AgentKey,
        Result: AgentRow,
        execute: (key) => sql`
          SELECT ${columns}
          FROM agents a JOIN namespaces n ON n.id = a.namespace_id
          WHERE a.id = ${key.id} AND a.namespace_id = ${key.namespace_id} AND n.status <> 'deleted'
          ${lock ? sql`FOR UPDATE OF a` : sql``}
        `
      })
    const find = findLive(false)
    const findLocked = findLive(true)

    /** SQL: the Agent exists under its live Namespace (what `findLive` finds), for a folded check. */
    const liveSql = (key: typeof AgentKey.Type) => sql`EXISTS (
      SELECT 1 FROM agents a JOIN namespaces n ON n.id = a.namespace_id
      WHERE a.id = ${key.id} AND a.namespace_id = ${key.namespace_id} AND n.status <> 'deleted'
    )`

    /** The Agent in whichever live Namespace holds it (a native admin host names only the Agent). */
    const findLiveById = SqlSchema.findOne({
      Request: AgentId,
      Result: AgentRow,
      execute: (id) => sql`
        SELECT ${columns}
        FROM agents a JOIN namespaces n ON n.id = a.namespace_id
        WHERE a.id = ${id} AND n.status <> 'deleted'
      `
    })

    /**
     * One keyset page of a Namespace's Agents, filtered by `visible` (the caller's `visibleTo`
     * fragment over `a.id` / `a.namespace_id`).
     */
    const page = (req: typeof AgentPage.Type, visible: Statement.Fragment): PageQuery<typeof AgentRow.Type> =>
      pageQuery(AgentRow, sql`
          SELECT ${columns}
          FROM agents a
          WHERE a.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "a.id", req.after)}
            AND ${visible}
          ORDER BY a.id
          LIMIT ${req.limit}
        `)

    const updateDraft = SqlSchema.single({
      Request: UpdateDraft,
      Result: AgentRow,
      execute: (row) => sql`
        UPDATE agents AS a
        SET configuration_id = ${row.configuration_id}, execution_mode = ${row.execution_mode}, backend_id = ${row.backend_id},
          settings = ${JSON.stringify(row.settings)}::jsonb, updated_at = now()
        WHERE a.id = ${row.id}
        RETURNING ${columns}
      `
    })

    /** SPEC 3: `deleting`, desired `stopped`, and who started (or took over) the deletion. */
    const markDeleting = SqlSchema.single({
      Request: MarkDeleting,
      Result: AgentRow,
      execute: (row) => sql`
        UPDATE agents AS a
        SET status = 'deleting', desired_runtime_state = 'stopped', deletion_initiator = ${row.deletion_initiator}, updated_at = now()
        WHERE a.id = ${row.id}
        RETURNING ${columns}
      `
    })

    const desireStopped = SqlSchema.single({
      Request: AgentId,
      Result: AgentRow,
      execute: (id) => sql`
        UPDATE agents AS a SET desired_runtime_state = 'stopped', updated_at = now() WHERE a.id = ${id}
        RETURNING ${columns}
      `
    })

    const desireRunning = SqlSchema.void({
      Request: AgentId,
      execute: (id) => sql`UPDATE agents SET desired_runtime_state = 'running', updated_at = now() WHERE id = ${id}`
    })

    const nameTaken = SqlSchema.findAll({
      Request: AgentName,
      Result: Schema.Struct({ taken: Schema.Literal(1) }),
      execute: (key) => sql`SELECT 1 AS taken FROM agents WHERE namespace_id = ${key.namespace_id} AND name = ${key.name}`
    })

    /** The Agent's state and its newest revision, optionally locked (`agent.deploy`, `stop`, `teardown`). */
    const state = (lock: boolean) =>
      SqlSchema.findOne({
        Request: AgentId,
        Result: AgentStateRow,
        execute: (id) => sql`
          SELECT a.status, a.desired_runtime_state, a.active_revision_id, a.deletion_initiator,
            (SELECT r.id FROM agent_revisions r WHERE r.agent_id = a.id ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_revision_id
          FROM agents a WHERE a.id = ${id}
          ${lock ? sql`FOR UPDATE OF a` : sql``}
        `
      })
    const stateOf = state(false)
    const stateLocked = state(true)

    const recoveryState = SqlSchema.findOne({
      Request: AgentId,
      Result: RecoveryStateRow,
      execute: (id) => sql`
        SELECT a.status, a.desired_runtime_state, a.active_revision_id,
          EXISTS (
            SELECT 1 FROM work_items w
            WHERE w.kind = ${AGENT_DEPLOY} AND w.state IN ('queued', 'running')
              AND w.key IN (SELECT r.id FROM agent_revisions r WHERE r.agent_id = a.id)
          ) AS deploying
        FROM agents a WHERE a.id = ${id}
      `
    })

    const wantedRunning = SqlSchema.findAll({
      Request: Schema.Void,
      Result: WantedRunningRow,
      execute: () => sql`
        SELECT id, namespace_id, active_revision_id FROM agents
        WHERE status = 'active' AND desired_runtime_state = 'running' AND active_revision_id IS NOT NULL
      `
    })

    /**
     * Activates the revision: the previous active one is retired, and the staged initial files
     * go (the first start applied them; they are never replayed, SPEC 4.4 rule 3).
     */
    const activate = (activation: typeof Activation.Type, previous: RevisionId | null) =>
      Effect.gen(function* () {
        yield* sql`UPDATE agents SET active_revision_id = ${activation.revision_id}, updated_at = now() WHERE id = ${activation.id}`
        if (previous !== null) yield* sql`UPDATE agent_revisions SET retired_at = now() WHERE id = ${previous} AND retired_at IS NULL`
        yield* sql`DELETE FROM agent_initial_files WHERE agent_id = ${activation.id}`
      })

    /** Clears `activeRevisionId` once execution is removed, if the Agent is still desired stopped. */
    const clearStopped = SqlSchema.void({
      Request: Activation,
      execute: (req) => sql`
        UPDATE agents SET active_revision_id = NULL, updated_at = now()
        WHERE id = ${req.id} AND desired_runtime_state = 'stopped' AND active_revision_id = ${req.revision_id}
      `
    })

    const stagedFiles = SqlSchema.findOne({
      Request: AgentId,
      Result: StagedFiles,
      execute: (id) => sql`SELECT files FROM agent_initial_files WHERE agent_id = ${id}`
    })

    const lockDeleting = SqlSchema.findOne({
      Request: AgentId,
      Result: Removable,
      execute: (id) => sql`SELECT service_principal_id, name FROM agents WHERE id = ${id} AND status = 'deleting' FOR UPDATE`
    })

    /**
     * Deletes the Agent and everything it owns: its revisions, its principal with its keys, and
     * the policy on the Agent, its revisions and its principal (with the bindings on the removed
     * bindings). Call inside a transaction.
     */
    const removeWithPrincipal = (agentId: AgentId, principal: ServicePrincipalId) =>
      Effect.gen(function* () {
        // The revisions are locked first, by a statement of their own: a binding being created on
        // one (which locks it FOR KEY SHARE) commits before the bindings below are read, and goes
        // with the revision instead of outliving it.
        yield* sql`SELECT 1 FROM agent_revisions WHERE agent_id = ${agentId} FOR UPDATE`
        const onAgent = sql`principal_id = ${principal}
          OR (resource_kind = 'agent' AND resource_id = ${agentId})
          OR (resource_kind = 'agent_revision' AND resource_id IN (SELECT id FROM agent_revisions WHERE agent_id = ${agentId}))`
        yield* deleteBindingsWhere(sql, onAgent)
        yield* sql`DELETE FROM restrictions WHERE ${onAgent}`
        yield* sql`UPDATE agents SET active_revision_id = NULL WHERE id = ${agentId}`
        yield* sql`DELETE FROM agent_revisions WHERE agent_id = ${agentId}`
        yield* sql`DELETE FROM agents WHERE id = ${agentId}`
        yield* sql`DELETE FROM service_keys WHERE service_principal_id = ${principal}`
        yield* sql`DELETE FROM principals WHERE id = ${principal}`
      })

    return {
      /** The live Agent; with `lock`, FOR UPDATE for the rest of the caller's transaction. */
      findLive: (key: typeof AgentKey.Type, lock: boolean) => (lock ? findLocked : find)(key).pipe(Effect.orDie),
      /** Keeps the SqlError: native admin answers a lost database 503 before any route runs. */
      findLiveById: (id: AgentId) => findLiveById(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      page,
      liveSql,
      updateDraft: (row: typeof UpdateDraft.Type) => updateDraft(row).pipe(Effect.orDie),
      markDeleting: (row: typeof MarkDeleting.Type) => markDeleting(row).pipe(Effect.orDie),
      desireStopped: (id: AgentId) => desireStopped(id).pipe(Effect.orDie),
      desireRunning: (id: AgentId) => desireRunning(id).pipe(Effect.orDie),
      nameTaken: (key: typeof AgentName.Type) => nameTaken(key).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      /** The reconcilers keep the SqlError: a lost database is a retryable work failure there. */
      state: (id: AgentId, lock: boolean) => (lock ? stateLocked : stateOf)(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      recoveryState: (id: AgentId) => recoveryState(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      wantedRunning: wantedRunning(undefined).pipe(Effect.catchTag("ParseError", Effect.die)),
      activate,
      clearStopped: (req: typeof Activation.Type) => clearStopped(req).pipe(Effect.catchTag("ParseError", Effect.die)),
      stagedFiles: (id: AgentId) =>
        stagedFiles(id).pipe(Effect.map(Option.map((row) => row.files)), Effect.catchTag("ParseError", Effect.die)),
      lockDeleting: (id: AgentId) => lockDeleting(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      removeWithPrincipal
    }
  })
}) {}
