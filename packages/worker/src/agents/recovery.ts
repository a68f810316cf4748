/**
 * Recovery after a worker restart (and a periodic check): the gateways that should be running
 * are re-adopted or started again, and gateways nobody wants any more are stopped.
 *
 * - The sweep (`RecoverySweepLive`), run by every worker at start and then every
 *   `recoveryInterval` (default 60 s), asks the Compute Driver for the health of the active
 *   revision of every Agent that is `active`, desired `running` and has an `activeRevisionId`,
 *   and lists the gateways the driver runs (`liveGateways`). It queues `agent.recover` (keyed by
 *   the Agent id, so idempotent across sweeps and replicas) for each Agent whose gateway is not
 *   healthy, and for each live gateway of an Agent that is not wanted running (orphans).
 * - The handler (`recoverAgent`) decides again from fresh state, holding the Agent's gateway
 *   lock: a deployment in flight or a teardown is left to its own reconciler; any live gateway of
 *   the Agent that does not run the wanted revision is stopped (deleted when the Agent is gone);
 *   the active revision's gateway is started from the revision snapshot with its Secrets (the
 *   driver adopts one that still runs). Repository sessions near their deadline are renewed
 *   first (the repository cleanup sweep queues `agent.recover` for them). It never changes `activeRevisionId` nor any deployment.
 */
import { AgentsRepo } from "@svc/core/db"
import { ComputeDriver, type GatewayRef } from "@svc/core/drivers/compute"
import { AgentId, NamespaceId } from "@svc/core/schema"
import { AGENT_RECOVER, type AgentWorkPayload } from "@svc/core/tenancy"
import { Cause, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { enqueue } from "@svc/core/work"
import type { HandlerContext } from "../engine/handlers.js"
import { ensureRevisionSessions } from "../repositories/sessions.js"
import {
  AgentWorkCodes,
  databaseFailure,
  driverFailure,
  revisionSnapshot,
  startRevisionGateway,
  withAgentLock
} from "./revisionGateway.js"
import { exportedFn, withExportedSpan } from "@svc/core/observability"

/** How long a recovery item may keep retrying; the next sweep queues a fresh one after that. */
export const RECOVERY_DEADLINE = Duration.minutes(15)

/** The Agent's state and whether a deployment of it is in flight (`agent.deploy` unfinished). */
const recoveryState = (agentId: AgentId) =>
  Effect.flatMap(AgentsRepo, (agents) => agents.recoveryState(agentId)).pipe(
    Effect.map(Option.getOrUndefined),
    Effect.catchTag("SqlError", databaseFailure)
  )

const converge = (namespaceId: NamespaceId, agentId: AgentId, attempt: number) =>
  Effect.gen(function* () {
    const driver = yield* ComputeDriver
    const state = yield* recoveryState(agentId)
    // A teardown or a deployment in flight owns the gateway; their reconcilers converge it.
    if (state?.status === "deleting" || state?.deploying === true) return
    const wanted = state?.desired_runtime_state === "running" ? state.active_revision_id : null
    const ref: GatewayRef | undefined = wanted === null
      ? undefined
      : { namespaceId, agentId, revisionId: wanted }
    const snapshot = wanted === null ? undefined : yield* revisionSnapshot(wanted)
    // Renews repository sessions near their deadline (the gateway's helper reads the new bearer
    // from its file); a credential service that is away never holds up the gateway.
    if (ref !== undefined && snapshot !== undefined) {
      yield* ensureRevisionSessions(ref, snapshot.repositoryCredentials, attempt).pipe(
        Effect.catchAll((failure) => Effect.logWarning("agent recovery: repository sessions not renewed", { agentId, code: failure.code }))
      )
    }
    if (ref !== undefined && (yield* driver.gatewayHealth(ref).pipe(Effect.mapError(driverFailure))) === "healthy") return

    const live = (yield* driver.liveGateways.pipe(Effect.mapError(driverFailure))).filter((g) => g.agentId === agentId)
    for (const gateway of live) {
      if (gateway.revisionId === wanted) continue
      yield* Effect.logInfo("agent recovery: stopping a gateway nobody wants", {
        agentId,
        revisionId: gateway.revisionId,
        reason: state === undefined ? "agent-removed" : wanted === null ? "desired-stopped" : "other-revision"
      })
      // A removed Agent's directory goes too; a stopped Agent keeps its persistent state.
      yield* (state === undefined ? driver.deleteGateway(gateway) : driver.stopGateway(gateway)).pipe(Effect.mapError(driverFailure))
    }
    if (wanted === null || snapshot === undefined) return
    yield* Effect.logInfo("agent recovery: starting or re-adopting the active revision's gateway", { agentId, revisionId: wanted })
    yield* startRevisionGateway({ namespaceId, agentId, revisionId: wanted, snapshot, recordFailure: false })
  }).pipe(Effect.provide(AgentsRepo.Default))

/** `agent.recover`: converge the Agent's gateway to its desired state, without touching deployments. */
export const recoverAgent = exportedFn("Agents.recover")(function* (payload: typeof AgentWorkPayload.Type, context?: HandlerContext) {
  yield* withAgentLock(payload.agentId, converge(payload.namespaceId, payload.agentId, context?.attempt ?? 1)).pipe(
    // Whoever holds the lock (a deployment, a stop, another recovery) is converging it already.
    Effect.catchIf(
      (failure) => failure.code === AgentWorkCodes.AGENT_BUSY,
      () => Effect.logInfo("agent recovery: the Agent's gateway is being changed by another worker", { agentId: payload.agentId })
    )
  )
})

const isAgentId = Schema.is(AgentId)
const isNamespaceId = Schema.is(NamespaceId)

/** One sweep: queue `agent.recover` for every Agent whose gateway is not what it should be. */
export const sweepAgents = Effect.gen(function* () {
  const agents = yield* AgentsRepo
  const driver = yield* ComputeDriver
  const wanted = yield* agents.wantedRunning
  const unhealthy = yield* Effect.filter(
    wanted,
    (agent) =>
      driver.gatewayHealth({ namespaceId: agent.namespace_id, agentId: agent.id, revisionId: agent.active_revision_id })
        .pipe(Effect.map((health) => health !== "healthy"), Effect.orElseSucceed(() => true)),
    { concurrency: 8 }
  )
  const wantedIds = new Set<string>(wanted.map((agent) => agent.id))
  // Only gateways named like our Agents: anything else under the driver is not ours to stop.
  const orphans = (yield* driver.liveGateways.pipe(Effect.orElseSucceed((): ReadonlyArray<GatewayRef> => [])))
    .filter((gateway) => !wantedIds.has(gateway.agentId) && isAgentId(gateway.agentId) && isNamespaceId(gateway.namespaceId))
  const targets = new Map<string, string>()
  for (const agent of unhealthy) targets.set(agent.id, agent.namespace_id)
  for (const gateway of orphans) targets.set(gateway.agentId, gateway.namespaceId)
  for (const [agentId, namespaceId] of targets) {
    yield* enqueue({ kind: AGENT_RECOVER, key: agentId, payload: { namespaceId, agentId }, deadline: RECOVERY_DEADLINE })
  }
  yield* Effect.logInfo("agent recovery: sweep done", { wanted: wanted.length, unhealthy: unhealthy.length, orphans: orphans.length, queued: targets.size })
  return targets.size
}).pipe(Effect.provide(AgentsRepo.Default), withExportedSpan("Agents.recoverySweep"))

/**
 * The sweep as a scoped fiber: at start, then every `interval`. A failed sweep (the database is
 * away, say) is logged and tried again at the next tick.
 */
export const RecoverySweepLive = (interval: Duration.DurationInput = Duration.minutes(1)) =>
  Layer.scopedDiscard(
    sweepAgents.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("agent recovery: sweep failed", Cause.pretty(cause))),
      Effect.repeat(Schedule.spaced(interval)),
      Effect.annotateLogs({ fiber: "agent.recovery-sweep" }),
      Effect.forkScoped
    )
  )
