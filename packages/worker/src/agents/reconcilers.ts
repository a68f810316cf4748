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
import { AgentsRepo, type AgentStateRow, RevisionsRepo } from "@svc/core/db"
import type { AgentId } from "@svc/core/schema"
import { AGENT_DEPLOY, AGENT_RECOVER, AGENT_STOP, AGENT_TEARDOWN, AgentDeployPayload, AgentWorkPayload } from "@svc/core/tenancy"
import { Effect, Layer, Option } from "effect"
import * as WorkHandler from "../engine/handler.js"
import { WorkFailure } from "../engine/failure.js"
import type { HandlerContext } from "../engine/handlers.js"
import { ensureRevisionSessions, retireAgentSessions, retireRevisionSessions } from "../repositories/sessions.js"
import { recoverAgent } from "./recovery.js"
import {
  AgentWorkCodes,
  databaseFailure,
  driverFailure,
  revisionSnapshot,
  startRevisionGateway,
  withAgentLock
} from "./revisionGateway.js"
import { exportedFn } from "@svc/core/observability"

export { AgentWorkCodes, MODEL_API_KEY_VARIABLE } from "./revisionGateway.js"

/** What the Agent reconcilers read and write; provided by each handler, so it needs only an SqlClient. */
const AgentRepos = Layer.mergeAll(AgentsRepo.Default, RevisionsRepo.Default)

const agentState = (agentId: AgentId, lock: boolean) =>
  Effect.flatMap(AgentsRepo, (agents) => Effect.map(agents.state(agentId, lock), Option.getOrUndefined))

/** Why this revision may not (or need not) be activated now: undefined when it should be. */
const notWanted = (state: AgentStateRow | undefined, revisionId: string): WorkFailure | "active" | undefined => {
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

/**
 * `agent.deploy`: open the revision's repository sessions and start its gateway, then activate
 * it, retiring the previous revision and its repository sessions. A deployment that fails for
 * good retires its own sessions.
 */
export const deployRevision = exportedFn("Agents.deployRevision")(function* (payload: typeof AgentDeployPayload.Type, context?: HandlerContext) {
  const { agentId, namespaceId, revisionId } = payload
  yield* deployAndActivate(payload, context?.attempt ?? 1).pipe(
    Effect.tapError((failure) => failure.permanent === true ? retireRevisionSessions({ namespaceId, agentId, revisionId }) : Effect.void)
  )
  // Also after a crash between activation and here: the previous revision's sessions go.
  yield* retireAgentSessions({ namespaceId, agentId }, revisionId)
})

const deployAndActivate = (payload: typeof AgentDeployPayload.Type, attempt: number) => Effect.gen(function* () {
  const { agentId, namespaceId, revisionId } = payload
  const sql = yield* SqlClient.SqlClient
  const agents = yield* AgentsRepo
  const before = notWanted(yield* agentState(agentId, false).pipe(Effect.catchTag("SqlError", databaseFailure)), revisionId)
  if (before === "active") return
  if (before !== undefined) return yield* before
  const snapshot = yield* revisionSnapshot(revisionId)
  if (snapshot === undefined) return yield* notWanted(undefined, revisionId) as WorkFailure
  const ref: GatewayRef = { namespaceId, agentId, revisionId }
  yield* withAgentLock(agentId, Effect.zipRight(
    ensureRevisionSessions(ref, snapshot.repositoryCredentials, attempt),
    startRevisionGateway({ namespaceId, agentId, revisionId, snapshot, recordFailure: true })
  ))
  const outcome = yield* sql.withTransaction(
    Effect.gen(function* () {
      const now = notWanted(yield* agentState(agentId, true), revisionId)
      if (now === "active") return undefined
      if (now !== undefined) return now
      const previous = (yield* agentState(agentId, false))?.active_revision_id ?? null
      // Retires the previous revision; initial workspace files were applied by the first start
      // and are never replayed (SPEC 4.4 rule 3).
      yield* agents.activate({ id: agentId, revision_id: revisionId }, previous)
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
  if (outcome === undefined) return
  // A stop, a later deployment or a deletion came while the gateway started: nobody wants the
  // gateway this attempt started, so it goes now rather than at the next recovery sweep. A no-op
  // when another revision's gateway replaced it already.
  yield* withAgentLock(agentId, Effect.flatMap(ComputeDriver, (driver) => driver.stopGateway(ref).pipe(Effect.mapError(driverFailure)))).pipe(
    Effect.catchAll((failure) => Effect.logWarning("agent deploy: the superseded revision's gateway was not stopped; recovery will", { agentId, revisionId, code: failure.code }))
  )
  return yield* outcome
}).pipe(Effect.provide(AgentRepos))

/**
 * `agent.stop`: remove execution, then clear `activeRevisionId` (if still stopped). The Agent's
 * repository sessions are retired and their client material removed; a deployment admitted
 * meanwhile keeps its own (`retireAgent` spares the latest revision of an Agent desired running).
 */
export const stopAgent = exportedFn("Agents.stopAgent")(function* (payload: typeof AgentWorkPayload.Type) {
  const { agentId, namespaceId } = payload
  const agents = yield* AgentsRepo
  const driver = yield* ComputeDriver
  const read = agentState(agentId, false).pipe(Effect.catchTag("SqlError", databaseFailure))
  let state = yield* read
  if (state === undefined || state.desired_runtime_state !== "stopped") return
  for (;;) {
    const active = state.active_revision_id
    if (active !== null) {
      const ref: GatewayRef = { namespaceId, agentId, revisionId: active }
      yield* withAgentLock(agentId, driver.stopGateway(ref).pipe(Effect.mapError(driverFailure)))
    }
    yield* retireAgentSessions({ namespaceId, agentId }, null)
    if (active === null) return
    yield* agents.clearStopped({ id: agentId, revision_id: active }).pipe(Effect.catchTag("SqlError", databaseFailure))
    // A deployment may have activated another revision meanwhile, and a stop requested after it
    // found this work still running (one unfinished `agent.stop` per Agent) and queued none.
    const after = yield* read
    if (after?.desired_runtime_state !== "stopped" || after.active_revision_id === null || after.active_revision_id === active) return
    state = after
  }
}, Effect.provide(AgentRepos))

/**
 * SPEC 6: a failing teardown is audited, attributed to the principal that started the deletion:
 * its first failed attempt (the retries that follow would flood the log) and any permanent
 * failure. A repeat `DELETE` adds its own event; these records remain. Best effort: an audit
 * that cannot be written (the database is what failed) is logged.
 */
const auditTeardownFailure = (
  payload: typeof AgentWorkPayload.Type,
  initiator: string | null,
  failure: WorkFailure,
  attempt: number
) =>
  attempt === 1 || failure.permanent === true
    ? recordAudit({
      kind: "agent.deletion-failed",
      outcome: "failure",
      actorPrincipalId: initiator,
      namespaceId: payload.namespaceId,
      resource: { kind: "agent", id: payload.agentId },
      details: { code: failure.code, attempt, permanent: failure.permanent === true }
    }).pipe(Effect.catchAll((error) => Effect.logWarning("agent teardown failure could not be audited", { cause: String(error) })))
    : Effect.void

/** `agent.teardown`: delete the workload, then everything the Agent owns, atomically. */
export const teardownAgent = exportedFn("Agents.teardown")(function* (payload: typeof AgentWorkPayload.Type, context?: HandlerContext) {
  const state = yield* agentState(payload.agentId, false).pipe(Effect.catchTag("SqlError", databaseFailure))
  if (state === undefined) return
  if (state.status !== "deleting") return
  yield* removeAgent(payload, state).pipe(
    Effect.tapError((failure) => auditTeardownFailure(payload, state.deletion_initiator, failure, context?.attempt ?? 1))
  )
}, Effect.provide(AgentRepos))

const removeAgent = (payload: typeof AgentWorkPayload.Type, state: AgentStateRow) => Effect.gen(function* () {
  const { agentId, namespaceId } = payload
  const sql = yield* SqlClient.SqlClient
  const agents = yield* AgentsRepo
  const driver = yield* ComputeDriver
  yield* withAgentLock(
    agentId,
    driver.deleteGateway({ namespaceId, agentId, revisionId: state.active_revision_id ?? "none" })
      .pipe(Effect.mapError(driverFailure))
  )
  // The Agent's tree (and its client material) went with the gateway; its sessions go now.
  yield* retireAgentSessions({ namespaceId, agentId }, null)
  yield* sql.withTransaction(
    Effect.gen(function* () {
      const found = yield* agents.lockDeleting(agentId)
      if (Option.isNone(found)) return
      const row = found.value
      const principal = row.service_principal_id
      // Policy on the Agent and its revisions goes with them, as does the principal's own.
      yield* agents.removeWithPrincipal(agentId, principal)
      yield* recordAudit({
        kind: "agent.removed",
        outcome: "success",
        // SPEC 6: attributable, to the principal whose DELETE this completes.
        actorPrincipalId: state.deletion_initiator,
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
