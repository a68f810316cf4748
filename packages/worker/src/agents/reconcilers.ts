/**
 * The Agent reconcilers (SPEC 3): `agent.deploy` (per revision), `agent.stop` and
 * `agent.teardown` (per Agent). Each converges the Compute Driver to the state recorded in
 * `agents` and is safe to repeat after a crash at any point:
 * - deploy starts (or re-adopts) the revision's gateway outside any transaction (it takes
 *   15-60 s), then activates the revision in one transaction that re-checks it is still wanted;
 * - stop removes execution, then clears `activeRevisionId`;
 * - teardown removes the workload, then deletes the Agent, its revisions, its principal, keys and
 *   bindings in one transaction, releasing its name.
 * - recover (`recovery.ts`) re-adopts or restarts the gateway an Agent should be running.
 * Starting a revision's gateway (Secrets, lock) is shared: `revisionGateway.ts`.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { ComputeDriver, type GatewayRef } from "@svc/core/drivers/compute"
import type { NamespaceId } from "@svc/core/schema"
import { AGENT_DEPLOY, AGENT_RECOVER, AGENT_STOP, AGENT_TEARDOWN, AgentDeployPayload, AgentWorkPayload } from "@svc/core/tenancy"
import { Effect, Layer } from "effect"
import * as WorkHandler from "../engine/handler.js"
import { WorkFailure } from "../engine/failure.js"
import { recoverAgent } from "./recovery.js"
import {
  AgentWorkCodes,
  databaseFailure,
  driverFailure,
  revisionSnapshot,
  startRevisionGateway,
  withAgentLock
} from "./revisionGateway.js"

export { AgentWorkCodes, MODEL_API_KEY_VARIABLE } from "./revisionGateway.js"

interface AgentState {
  readonly status: "active" | "deleting"
  readonly desired_runtime_state: "running" | "stopped"
  readonly active_revision_id: string | null
  readonly latest_revision_id: string | null
}

const agentState = (sql: SqlClient.SqlClient, agentId: string, lock: boolean) =>
  Effect.map(
    sql<AgentState>`
      SELECT a.status, a.desired_runtime_state, a.active_revision_id,
        (SELECT r.id FROM agent_revisions r WHERE r.agent_id = a.id ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_revision_id
      FROM agents a WHERE a.id = ${agentId}
      ${lock ? sql`FOR UPDATE OF a` : sql``}
    `,
    (rows) => rows[0]
  )

/** Why this revision may not (or need not) be activated now: undefined when it should be. */
const notWanted = (state: AgentState | undefined, revisionId: string): WorkFailure | "active" | undefined => {
  if (state === undefined || state.status === "deleting") {
    return new WorkFailure({ code: AgentWorkCodes.AGENT_DELETING, message: "The Agent is being deleted; the revision was not activated.", permanent: true })
  }
  if (state.active_revision_id === revisionId) return "active"
  if (state.latest_revision_id !== revisionId || state.desired_runtime_state !== "running") {
    return new WorkFailure({
      code: AgentWorkCodes.REVISION_SUPERSEDED,
      message: "A later deployment or a stop superseded this revision; it was not activated.",
      permanent: true
    })
  }
  return undefined
}

/** `agent.deploy`: start the revision's gateway, then activate it (retiring the previous one). */
export const deployRevision = Effect.fn("Agents.deployRevision")(function* (payload: typeof AgentDeployPayload.Type) {
  const { agentId, namespaceId, revisionId } = payload
  const sql = yield* SqlClient.SqlClient
  const before = notWanted(yield* agentState(sql, agentId, false).pipe(Effect.catchTag("SqlError", databaseFailure)), revisionId)
  if (before === "active") return
  if (before !== undefined) return yield* before
  const snapshot = yield* revisionSnapshot(revisionId)
  if (snapshot === undefined) return yield* notWanted(undefined, revisionId) as WorkFailure
  yield* withAgentLock(agentId, startRevisionGateway({ namespaceId, agentId, revisionId, snapshot, recordFailure: true }))
  const outcome = yield* sql.withTransaction(
    Effect.gen(function* () {
      const now = notWanted(yield* agentState(sql, agentId, true), revisionId)
      if (now === "active") return undefined
      if (now !== undefined) return now
      const previous = (yield* agentState(sql, agentId, false))?.active_revision_id ?? null
      yield* sql`UPDATE agents SET active_revision_id = ${revisionId}, updated_at = now() WHERE id = ${agentId}`
      if (previous !== null) yield* sql`UPDATE agent_revisions SET retired_at = now() WHERE id = ${previous} AND retired_at IS NULL`
      // Initial workspace files were applied by the first start; they are never replayed (SPEC 4.4 rule 3).
      yield* sql`DELETE FROM agent_initial_files WHERE agent_id = ${agentId}`
      yield* recordAudit({
        kind: "agent.revision-activated",
        outcome: "success",
        actorPrincipalId: null,
        namespaceId,
        resource: { kind: "agent", id: agentId },
        details: { revisionId, previousRevisionId: previous }
      })
      return undefined
    })
  ).pipe(Effect.catchTag("SqlError", databaseFailure))
  if (outcome !== undefined) return yield* outcome
})

/** `agent.stop`: remove execution, then clear `activeRevisionId` (if still stopped). */
export const stopAgent = Effect.fn("Agents.stopAgent")(function* (payload: typeof AgentWorkPayload.Type) {
  const { agentId, namespaceId } = payload
  const sql = yield* SqlClient.SqlClient
  const driver = yield* ComputeDriver
  const state = yield* agentState(sql, agentId, false).pipe(Effect.catchTag("SqlError", databaseFailure))
  if (state === undefined || state.desired_runtime_state !== "stopped" || state.active_revision_id === null) return
  const ref: GatewayRef = { namespaceId: namespaceId as NamespaceId, agentId, revisionId: state.active_revision_id }
  yield* withAgentLock(agentId, driver.stopGateway(ref).pipe(Effect.mapError(driverFailure)))
  yield* sql`
    UPDATE agents SET active_revision_id = NULL, updated_at = now()
    WHERE id = ${agentId} AND desired_runtime_state = 'stopped' AND active_revision_id = ${state.active_revision_id}
  `.pipe(Effect.catchTag("SqlError", databaseFailure))
})

/** `agent.teardown`: delete the workload, then everything the Agent owns, atomically. */
export const teardownAgent = Effect.fn("Agents.teardown")(function* (payload: typeof AgentWorkPayload.Type) {
  const { agentId, namespaceId } = payload
  const sql = yield* SqlClient.SqlClient
  const driver = yield* ComputeDriver
  const state = yield* agentState(sql, agentId, false).pipe(Effect.catchTag("SqlError", databaseFailure))
  if (state === undefined) return
  if (state.status !== "deleting") return
  yield* withAgentLock(
    agentId,
    driver.deleteGateway({ namespaceId: namespaceId as NamespaceId, agentId, revisionId: state.active_revision_id ?? "none" })
      .pipe(Effect.mapError(driverFailure))
  )
  yield* sql.withTransaction(
    Effect.gen(function* () {
      const rows = yield* sql<{ service_principal_id: string; name: string }>`
        SELECT service_principal_id, name FROM agents WHERE id = ${agentId} AND status = 'deleting' FOR UPDATE
      `
      const row = rows[0]
      if (row === undefined) return
      const principal = row.service_principal_id
      // Policy on the Agent and its revisions goes with them, as does the principal's own.
      const onAgent = sql`principal_id = ${principal}
        OR (resource_kind = 'agent' AND resource_id = ${agentId})
        OR (resource_kind = 'agent_revision' AND resource_id IN (SELECT id FROM agent_revisions WHERE agent_id = ${agentId}))`
      yield* sql`DELETE FROM access_bindings WHERE ${onAgent}`
      yield* sql`DELETE FROM restrictions WHERE ${onAgent}`
      yield* sql`UPDATE agents SET active_revision_id = NULL WHERE id = ${agentId}`
      yield* sql`DELETE FROM agent_revisions WHERE agent_id = ${agentId}`
      yield* sql`DELETE FROM agents WHERE id = ${agentId}`
      yield* sql`DELETE FROM service_keys WHERE service_principal_id = ${principal}`
      yield* sql`DELETE FROM principals WHERE id = ${principal}`
      yield* recordAudit({
        kind: "agent.removed",
        outcome: "success",
        actorPrincipalId: null,
        namespaceId,
        resource: { kind: "agent", id: agentId },
        details: { name: row.name, servicePrincipalId: principal }
      })
    })
  ).pipe(Effect.catchTag("SqlError", databaseFailure))
})

/** The Agent reconcilers; they need the Compute and Secret Drivers and the database. */
export const AgentReconcilersLive = Layer.mergeAll(
  WorkHandler.layer(AGENT_DEPLOY, AgentDeployPayload, deployRevision),
  WorkHandler.layer(AGENT_RECOVER, AgentWorkPayload, recoverAgent),
  WorkHandler.layer(AGENT_STOP, AgentWorkPayload, stopAgent),
  WorkHandler.layer(AGENT_TEARDOWN, AgentWorkPayload, teardownAgent)
)
