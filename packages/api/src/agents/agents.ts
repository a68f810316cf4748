/**
 * Agents (SPEC 2.4, 3, 4.4): create, list, read, update, delete. Create and update save the
 * draft only (no Compute work, rule 7); each Agent gets its own opaque service principal.
 * Delete marks the Agent `deleting` and queues its teardown (202).
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { AgentDeleting, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, decide, visibleTo } from "@svc/core/iam"
import { AgentId, ServicePrincipalId } from "@svc/core/schema"
import { AGENT_TEARDOWN, type AgentProvisionRequest, insertAgent, pinAgentSecrets, WorkOutbox } from "@svc/core/tenancy"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import { isUniqueViolation, namespaceRef, type Page, requireNamespace } from "../iam/access.js"
import { lockNamespaceForWrite } from "../namespaces/children.js"
import { admitDraft, type Draft, harnessSecretId, type LaunchDraft } from "./admission.js"
import type { CreateAgent, UpdateAgent } from "@svc/core/api"
import { AGENT_COLUMNS, type AgentRow, agentRef, requireAgent, toAgent } from "./store.js"
import { currentWorkspaceDefaultsId } from "./workspaceDefaults.js"

type CreateAgentBody = typeof CreateAgent.Type
type UpdateAgentBody = typeof UpdateAgent.Type

export const SETTINGS_FIELDS = ["harnessAuth", "plugins", "pluginApprovers", "repositoryBindings", "repositoryAccess"] as const

/** The settings a body supplies; the two repository forms replace each other (SPEC 2.4). */
export const suppliedSettings = (body: Partial<Record<(typeof SETTINGS_FIELDS)[number], unknown>>) => {
  const supplied: Record<string, unknown> = {}
  for (const field of SETTINGS_FIELDS) if (body[field] !== undefined) supplied[field] = body[field]
  if (body.repositoryBindings !== undefined) supplied.repositoryAccess = undefined
  if (body.repositoryAccess !== undefined) supplied.repositoryBindings = undefined
  return supplied
}

export const withoutUndefined = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))

export const conflictOnName = (error: unknown) =>
  isUniqueViolation(error)
    ? Effect.fail(new ResourceConflict({ message: "An Agent with this name already exists in the Namespace." }))
    : Effect.die(error)

/**
 * The Agent row's fields a create-style body and its admitted draft give (all but the ids and
 * the Configuration): what `POST .../agents` writes at once, and what Agent provisioning keeps
 * for its transport phase.
 */
export const agentFieldsOf = (body: Omit<CreateAgentBody, "configurationId">, draft: LaunchDraft): AgentProvisionRequest["agent"] => ({
  name: body.name,
  executionMode: draft.executionMode,
  backendId: draft.backendId,
  settings: withoutUndefined({ ...suppliedSettings(body), harnessAuth: draft.harnessAuth }),
  workspaceDefaultsId: body.workspaceDefaultsId ?? null,
  initialWorkspaceFiles: body.initialWorkspaceFiles ?? null,
  harnessSecretId: harnessSecretId(draft.harnessAuth) ?? null
})

export const createAgent = Effect.fn("Agents.create")(function* (namespaceId: string, body: CreateAgentBody) {
  const caller = yield* CurrentCaller
  yield* authorize("agent:create", namespaceRef(namespaceId))
  const sql = yield* SqlClient.SqlClient
  const id = AgentId.make()
  const principalId = ServicePrincipalId.make()
  const draft: Draft = {
    configurationId: body.configurationId,
    executionMode: body.executionMode ?? "embedded",
    backendId: body.backendId ?? null,
    harnessAuth: body.harnessAuth ?? null,
    plugins: body.plugins
  }
  const create = Effect.gen(function* () {
    const namespace = yield* lockNamespaceForWrite(namespaceId)
    if (namespace.status === "failed") {
      return yield* new ResourceConflict({ message: "The Namespace failed to provision and cannot accept new Agents." })
    }
    yield* admitDraft(namespaceId, draft)
    if (body.workspaceDefaultsId !== undefined && body.workspaceDefaultsId !== (yield* currentWorkspaceDefaultsId)) {
      return yield* new ResourceConflict({ message: "The workspaceDefaultsId is stale; read the current workspace defaults and retry." })
    }
    yield* insertAgent(
      { id, servicePrincipalId: principalId, namespaceId, configurationId: draft.configurationId, ...agentFieldsOf(body, draft) },
      { actorPrincipalId: caller.principalId }
    )
    return toAgent(yield* requireAgent(namespaceId, id, false))
  })
  return yield* sql.withTransaction(create).pipe(Effect.catchTag("SqlError", conflictOnName))
})

export const listAgents = Effect.fn("Agents.list")(function* (namespaceId: string, page: Page) {
  const caller = yield* CurrentCaller
  yield* authorize("namespace:read", namespaceRef(namespaceId))
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<AgentRow>`
    SELECT ${sql.unsafe(AGENT_COLUMNS)}
    FROM agents a
    WHERE a.namespace_id = ${namespaceId}
      AND ${page.after === undefined ? sql`TRUE` : sql`a.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "agent:read", "agent", { id: "a.id", namespaceId: "a.namespace_id" })}
    ORDER BY a.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toAgent)
})

export const getAgent = Effect.fn("Agents.get")(function* (namespaceId: string, agentId: string) {
  yield* authorize("agent:read", agentRef(namespaceId, agentId))
  return toAgent(yield* requireAgent(namespaceId, agentId, false))
})

export const updateAgent = Effect.fn("Agents.update")(function* (namespaceId: string, agentId: string, body: UpdateAgentBody) {
  const caller = yield* CurrentCaller
  yield* authorize("agent:update", agentRef(namespaceId, agentId))
  const sql = yield* SqlClient.SqlClient
  const update = Effect.gen(function* () {
    yield* lockNamespaceForWrite(namespaceId)
    const current = yield* requireAgent(namespaceId, agentId, true)
    if (current.status === "deleting") return yield* new AgentDeleting({ message: "The Agent is being deleted." })
    // Omitted fields keep what is saved, as stored: an unreadable saved field stays as it is.
    const settings = withoutUndefined({ ...current.settings, ...suppliedSettings(body) })
    const harnessAuth = body.harnessAuth !== undefined ? body.harnessAuth : (current.settings.harnessAuth ?? null)
    const draft: Draft = {
      configurationId: body.configurationId,
      executionMode: body.executionMode ?? current.execution_mode,
      backendId: body.backendId !== undefined ? body.backendId : current.backend_id,
      // Only what this request supplies is re-admitted against the caller's grants.
      harnessAuth: body.harnessAuth !== undefined ? body.harnessAuth : null,
      plugins: body.plugins
    }
    yield* admitDraft(namespaceId, draft)
    const rows = yield* sql<AgentRow>`
      UPDATE agents AS a
      SET configuration_id = ${draft.configurationId}, execution_mode = ${draft.executionMode}, backend_id = ${draft.backendId},
        settings = ${JSON.stringify(settings)}::jsonb, updated_at = now()
      WHERE a.id = ${agentId}
      RETURNING ${sql.unsafe(AGENT_COLUMNS)}
    `
    if (body.harnessAuth !== undefined) yield* pinAgentSecrets(agentId, harnessSecretId(harnessAuth as Draft["harnessAuth"]) ?? null)
    yield* recordAudit({
      kind: "agent.updated",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "agent", id: agentId },
      details: { configurationId: draft.configurationId, fields: Object.keys(body).sort() }
    })
    return toAgent(rows[0]!)
  })
  return yield* sql.withTransaction(update).pipe(Effect.catchTag("SqlError", Effect.die))
})

/** Whether the principal that started a deletion still holds `agent:delete` on the Agent. */
const stillMayDelete = (principalId: string, ref: ReturnType<typeof agentRef>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ namespace_id: string | null }>`
      SELECT namespace_id FROM principals WHERE id = ${principalId} AND deleted_at IS NULL
    `.pipe(Effect.orDie)
    if (rows[0] === undefined) return false
    const decision = yield* decide({ principalId, namespaceId: rows[0].namespace_id }, "agent:delete", ref).pipe(Effect.orDie)
    return decision._tag === "Allowed"
  })

/**
 * SPEC 3: `DELETE` marks the Agent `deleting` (desired `stopped`) and queues its teardown. A
 * repeat replenishes the teardown's attempts (a new work item when the last one failed); another
 * actor may take it over only when the initiator has lost `agent:delete`.
 */
export const deleteAgent = Effect.fn("Agents.delete")(function* (namespaceId: string, agentId: string) {
  const caller = yield* CurrentCaller
  const ref = agentRef(namespaceId, agentId)
  yield* authorize("agent:delete", ref)
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* WorkOutbox
  const remove = Effect.gen(function* () {
    const current = yield* requireAgent(namespaceId, agentId, true)
    const retry = current.status === "deleting"
    if (retry && current.deletion_initiator !== null && current.deletion_initiator !== caller.principalId) {
      if (yield* stillMayDelete(current.deletion_initiator, ref)) {
        return yield* new ResourceConflict({ message: "Another actor is deleting this Agent." })
      }
    }
    const rows = yield* sql<AgentRow>`
      UPDATE agents AS a
      SET status = 'deleting', desired_runtime_state = 'stopped', deletion_initiator = ${caller.principalId}, updated_at = now()
      WHERE a.id = ${agentId}
      RETURNING ${sql.unsafe(AGENT_COLUMNS)}
    `
    yield* outbox.enqueue({ kind: AGENT_TEARDOWN, key: agentId, payload: { namespaceId, agentId } })
    yield* recordAudit({
      kind: retry ? "agent.deletion-retried" : "agent.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "agent", id: agentId },
      details: { name: current.name }
    })
    return toAgent(rows[0]!)
  })
  return yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})
