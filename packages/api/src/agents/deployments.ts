/**
 * Deployments (SPEC 2.6, 2.7, 3, 4.4 rule 1): `deploy` snapshots the saved draft into an
 * immutable revision and queues its work in one transaction; `stop` sets the desired state;
 * the deployment status reads persisted state only (the work item and the revision row).
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { InstallationConfiguration } from "@svc/core/config"
import { AgentDeleting, Forbidden, NamespaceNotReady, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, decide, visibleTo } from "@svc/core/iam"
import { type AgentId, type ConfigurationId, type NamespaceId, RevisionId } from "@svc/core/schema"
import { AGENT_DEPLOY, AGENT_STOP, deliveredSecrets, WorkOutbox } from "@svc/core/tenancy"
import { WorkItemsRepo } from "@svc/core/db"
import { WorkCodes } from "@svc/core/work"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import type { Page } from "../iam/access.js"
import { secretRef } from "../secrets/policy.js"
import { admitDraft } from "./admission.js"
import { type HarnessAuth, readSavedSettings } from "@svc/core/api"
import type { AgentRevision, DeploymentStatus } from "@svc/core/api"
import { AGENT_COLUMNS, type AgentRow, agentRef, requireAgent, toAgent } from "./store.js"

/** The harness every revision runs: an OpenClaw gateway. */
export const HARNESS_ID = "openclaw"

export const revisionRef = (namespaceId: string, revisionId: string) =>
  ({ kind: "agent_revision", id: revisionId, namespaceId }) as const

interface RevisionRow {
  readonly id: string
  readonly snapshot: Omit<AgentRevision, "createdAt">
  readonly created_at: Date
}

/**
 * A revision as stored, with its frozen settings decoded like an Agent's (SPEC 2.4): a setting
 * that no longer decodes is omitted and named in `configurationReadError`.
 */
const toRevision = (row: RevisionRow): AgentRevision => {
  const { pluginApprovers: _stored, ...snapshot } = row.snapshot
  const { settings, unreadable } = readSavedSettings({
    harnessAuth: snapshot.harness.auth ?? null,
    plugins: snapshot.plugins.plugins ?? {},
    pluginApprovers: row.snapshot.pluginApprovers ?? null
  })
  return {
    ...snapshot,
    harness: { id: snapshot.harness.id, mode: snapshot.harness.mode, ...(unreadable.includes("harnessAuth") ? {} : { auth: settings.harnessAuth ?? null }) },
    plugins: { driver: snapshot.plugins.driver, ...(settings.plugins === undefined ? {} : { plugins: settings.plugins }) },
    ...(unreadable.includes("pluginApprovers") ? {} : { pluginApprovers: settings.pluginApprovers ?? null }),
    ...(unreadable.length === 0 ? {} : { configurationReadError: { code: "SAVED_CONFIGURATION_UNREADABLE", field: unreadable[0]! } }),
    createdAt: row.created_at
  }
}

interface ConfigurationRow {
  readonly id: string
  readonly generation: string | number
  readonly values: Record<string, unknown>
  readonly secret_bindings: Record<string, { readonly source: { readonly id: string } }>
}

/**
 * Every Secret a revision delivers needs the caller's and the Agent principal's exact `operate`
 * (SPEC 4.4): a missing grant of the Agent principal is the operator's to fix, so it is 403 with
 * the principal named, never a deployment that fails later.
 */
const authorizeSecrets = (namespaceId: string, agent: AgentRow, secretIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    for (const secretId of secretIds) {
      const ref = secretRef(namespaceId, secretId)
      yield* authorize("secret:operate", ref)
      const decision = yield* decide({ principalId: agent.service_principal_id, namespaceId }, "secret:operate", ref).pipe(Effect.orDie)
      if (decision._tag !== "Allowed") {
        return yield* new Forbidden({
          message: `The Agent's service principal ${agent.service_principal_id} lacks secret:operate on ${secretId}.`
        })
      }
    }
  })

export const deployAgent = Effect.fn("Agents.deploy")(function* (namespaceId: string, agentId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("agent:deploy", agentRef(namespaceId, agentId))
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* WorkOutbox
  const installation = yield* InstallationConfiguration
  const deploy = Effect.gen(function* () {
    const agent = yield* requireAgent(namespaceId, agentId, true)
    if (agent.status === "deleting") return yield* new AgentDeleting({ message: "The Agent is being deleted." })
    const namespaces = yield* sql<{ status: string }>`SELECT status FROM namespaces WHERE id = ${namespaceId} FOR SHARE`
    if (namespaces[0]?.status !== "ready") {
      return yield* new NamespaceNotReady({ message: "The Namespace's infrastructure is not ready for deployment." })
    }
    const { settings, unreadable } = readSavedSettings(agent.settings)
    if (unreadable.length > 0) {
      return yield* new ResourceConflict({ message: `The Agent's saved ${unreadable[0]} is unreadable; update it before deploying.` })
    }
    const harnessAuth: HarnessAuth | null = settings.harnessAuth ?? null
    if (harnessAuth === null) return yield* new ResourceConflict({ message: "The Agent has no harness authentication." })
    yield* admitDraft(namespaceId, {
      configurationId: agent.configuration_id,
      executionMode: agent.execution_mode,
      backendId: agent.backend_id,
      harnessAuth,
      plugins: settings.plugins
    })
    const configurations = yield* sql<ConfigurationRow>`
      SELECT id, generation, "values", secret_bindings FROM configurations WHERE id = ${agent.configuration_id} FOR KEY SHARE
    `
    const configuration = configurations[0]
    if (configuration === undefined) return yield* new NotFound({ message: "The Configuration does not exist in this Namespace." })
    const secretIds = [...new Set(deliveredSecrets(configuration.secret_bindings, harnessAuth).map((d) => d.secretId))].sort()
    yield* authorizeSecrets(namespaceId, agent, secretIds)

    const id = RevisionId.make()
    const snapshot: Omit<AgentRevision, "createdAt"> = {
      id,
      agentId: agent.id as AgentId,
      namespaceId: namespaceId as NamespaceId,
      backendId: agent.backend_id,
      compute: { id: installation.drivers.compute.id, implementation: installation.drivers.compute.id },
      configuration: configuration.values,
      configurationGeneration: Number(configuration.generation),
      configurationId: configuration.id as ConfigurationId,
      configurationKind: "agent",
      secretBindings: configuration.secret_bindings,
      harness: { id: HARNESS_ID, mode: agent.execution_mode, auth: harnessAuth },
      plugins: {
        driver: installation.drivers.plugin === undefined
          ? { id: "none", implementation: "none" }
          : { id: installation.drivers.plugin.id, implementation: installation.drivers.plugin.id },
        plugins: settings.plugins ?? {}
      },
      pluginApprovers: settings.pluginApprovers ?? null,
      repositoryCredentials: []
    }
    const rows = yield* sql<RevisionRow>`
      INSERT INTO agent_revisions (id, agent_id, namespace_id, configuration_id, configuration_generation, snapshot)
      VALUES (${id}, ${agentId}, ${namespaceId}, ${configuration.id}, ${Number(configuration.generation)}, ${JSON.stringify(snapshot)}::jsonb)
      RETURNING id, snapshot, created_at
    `
    if (secretIds.length > 0) {
      yield* sql`INSERT INTO agent_revision_secret_refs ${sql.insert(secretIds.map((secretId) => ({ revision_id: id, secret_id: secretId })))}`
    }
    yield* sql`UPDATE agents SET desired_runtime_state = 'running', updated_at = now() WHERE id = ${agentId}`
    yield* outbox.enqueue({ kind: AGENT_DEPLOY, key: id, payload: { namespaceId, agentId, revisionId: id } })
    yield* recordAudit({
      kind: "agent.deployed",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "agent", id: agentId },
      details: { revisionId: id, configurationId: configuration.id, configurationGeneration: Number(configuration.generation) }
    })
    return toRevision(rows[0]!)
  })
  return yield* sql.withTransaction(deploy).pipe(Effect.catchTag("SqlError", Effect.die))
})

/** SPEC 3: desired `stopped`; the worker removes execution and clears `activeRevisionId`. Repeat is safe. */
export const stopAgent = Effect.fn("Agents.stop")(function* (namespaceId: string, agentId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("agent:operate", agentRef(namespaceId, agentId))
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* WorkOutbox
  const stop = Effect.gen(function* () {
    const agent = yield* requireAgent(namespaceId, agentId, true)
    if (agent.status === "deleting") return yield* new AgentDeleting({ message: "The Agent is being deleted." })
    const rows = yield* sql<AgentRow>`
      UPDATE agents AS a SET desired_runtime_state = 'stopped', updated_at = now() WHERE a.id = ${agentId}
      RETURNING ${sql.unsafe(AGENT_COLUMNS)}
    `
    yield* outbox.enqueue({ kind: AGENT_STOP, key: agentId, payload: { namespaceId, agentId } })
    yield* recordAudit({
      kind: "agent.stopped",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "agent", id: agentId }
    })
    return toAgent(rows[0]!)
  })
  return yield* sql.withTransaction(stop).pipe(Effect.catchTag("SqlError", Effect.die))
})

const revisionNotFound = () => new NotFound({ message: "The revision does not exist." })

export const findRevision = (namespaceId: string, agentId: string, revisionId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<RevisionRow & {
      error: DeploymentStatus["error"]
      warnings: DeploymentStatus["warnings"]
      runtime_failure: RuntimeFailure | null
    }>`
      SELECT r.id, r.snapshot, r.created_at, r.error, r.warnings, r.runtime_failure
      FROM agent_revisions r JOIN namespaces n ON n.id = r.namespace_id
      WHERE r.id = ${revisionId} AND r.agent_id = ${agentId} AND r.namespace_id = ${namespaceId} AND n.status <> 'deleted'
    `.pipe(Effect.orDie)
    if (rows[0] === undefined) return yield* revisionNotFound()
    return rows[0]
  })

export const getRevision = Effect.fn("Agents.revision")(function* (namespaceId: string, agentId: string, revisionId: string) {
  yield* authorize("agent_revision:read", revisionRef(namespaceId, revisionId))
  return toRevision(yield* findRevision(namespaceId, agentId, revisionId))
})

export const listRevisions = Effect.fn("Agents.revisions")(function* (namespaceId: string, agentId: string, page: Page) {
  const caller = yield* CurrentCaller
  yield* authorize("agent:read", agentRef(namespaceId, agentId))
  yield* requireAgent(namespaceId, agentId, false)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<RevisionRow>`
    SELECT r.id, r.snapshot, r.created_at FROM agent_revisions r
    WHERE r.agent_id = ${agentId} AND r.namespace_id = ${namespaceId}
      AND ${page.after === undefined ? sql`TRUE` : sql`r.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "agent_revision:read", "agent_revision", { id: "r.id", namespaceId: "r.namespace_id" })}
    ORDER BY r.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toRevision)
})

/** What the worker notes on a revision when starting its gateway fails (migration 0010). */
interface RuntimeFailure {
  readonly component: string
  readonly check: string
  readonly checkedAt: string
  readonly code: string
}

const RUNTIME_FAILURE_PART = /^[A-Za-z0-9._~:@-]{1,64}$/

/** Only a well-formed record is shown (SPEC 2.7's patterns); anything else is left out. */
const safeRuntimeFailure = (failure: RuntimeFailure | null): RuntimeFailure | undefined => {
  if (failure === null || typeof failure !== "object") return undefined
  const { component, check, checkedAt, code } = failure
  const parts = [component, check, code]
  if (!parts.every((part) => typeof part === "string" && RUNTIME_FAILURE_PART.test(part))) return undefined
  if (typeof checkedAt !== "string" || Number.isNaN(Date.parse(checkedAt))) return undefined
  return { component, check, checkedAt: new Date(checkedAt).toISOString(), code }
}

/**
 * SPEC 2.7: a deployment that did not converge before its work item's deadline. `timeoutMs` is
 * the time it was given (deadline minus admission); `runtimeFailure` is the last failed check the
 * worker noted, when there was one. The message is fixed; native text never appears.
 */
const convergenceDeadlineExceeded = (item: { readonly deadlineAt: Date; readonly createdAt: Date }, failure: RuntimeFailure | null): NonNullable<DeploymentStatus["error"]> => {
  const timeoutMs = item.deadlineAt.getTime() - item.createdAt.getTime()
  const runtimeFailure = safeRuntimeFailure(failure)
  const data = {
    ...(timeoutMs > 0 ? { timeoutMs } : {}),
    ...(runtimeFailure === undefined ? {} : { runtimeFailure: { ...runtimeFailure } })
  }
  return {
    code: "CONVERGENCE_DEADLINE_EXCEEDED",
    message: "The deployment did not converge before its deadline.",
    ...(Object.keys(data).length === 0 ? {} : { data })
  }
}

/** SPEC 2.7, from persisted state only: the revision's work item and the revision row. */
export const getDeployment = Effect.fn("Agents.deployment")(function* (namespaceId: string, agentId: string, deploymentId: string) {
  yield* authorize("agent_revision:read", revisionRef(namespaceId, deploymentId))
  const revision = yield* findRevision(namespaceId, agentId, deploymentId)
  const work = yield* workStatus(AGENT_DEPLOY, deploymentId)
  const { lastAttempt, nextAttemptAt, status } = work
  const terminal = status === "succeeded" || status === "failed"
  const deployment: DeploymentStatus = {
    deploymentId: revision.id as DeploymentStatus["deploymentId"],
    namespaceId: namespaceId as NamespaceId,
    agentId: agentId as AgentId,
    status,
    error: status !== "failed"
      ? null
      : revision.error ?? (work.item !== undefined && lastAttempt?.code === WorkCodes.DEADLINE_EXCEEDED
        ? convergenceDeadlineExceeded(work.item, revision.runtime_failure)
        : {
          code: lastAttempt?.code ?? "DEPLOYMENT_FAILED",
          message: lastAttempt?.message ?? "The deployment failed."
        }),
    progress: terminal ? null : { lastAttempt, nextAttemptAt },
    warnings: revision.warnings
  }
  return deployment
})

/** The public status of the work of a kind and key (`WorkItemsRepo`). */
const workStatus = (kind: string, key: string) => Effect.flatMap(WorkItemsRepo, (work) => work.status(kind, key))
