/**
 * Agents (SPEC 2.4, 3, 4.4): create, list, read, update, delete. Create and update save the
 * draft only (no Compute work, rule 7); each Agent gets its own opaque service principal.
 * Delete marks the Agent `deleting` and queues its teardown (202).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { type CreateAgent, type PageParams, readSavedSettings, type UpdateAgent } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { AgentsRepo, WorkItemsRepo } from "@svc/core/db"
import { AgentDeleting, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, decide, visibleTo } from "@svc/core/iam"
import { AgentId, type NamespaceId, ServicePrincipalId } from "@svc/core/schema"
import { AGENT_TEARDOWN, insertAgent, pinAgentSecrets } from "@svc/core/tenancy"
import { Effect, Option, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages, inNamespace } from "../auth/gatedPage.js"
import { isUniqueViolation, namespaceRef, pageOf } from "../iam/access.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { AgentAdmission, type Draft, harnessSecretId } from "./admission.js"
import { agentFieldsOf, suppliedSettings, withoutUndefined } from "./draft.js"
import { agentRef } from "./policy.js"
import { AgentLookup } from "./lookup.js"
import { ServiceAccountBinding } from "./serviceAccountBinding.js"
import { ModelCredentials } from "./modelCredentials.js"
import { requestedRepositories } from "./repositoryAdmission.js"
import { toAgent } from "./views.js"
import { currentWorkspaceDefaultsId } from "./workspaceDefaults.js"
import { exportedFn } from "@svc/core/observability"

type CreateAgentBody = typeof CreateAgent.Type
type UpdateAgentBody = typeof UpdateAgent.Type

export const conflictOnName = (error: unknown) =>
  isUniqueViolation(error)
    ? Effect.fail(new ResourceConflict({ message: "An Agent with this name already exists in the Namespace." }))
    : Effect.die(error)

const agentDeleting = () => new AgentDeleting({ message: "The Agent is being deleted." })

export class Agents extends Effect.Service<Agents>()("@svc/api/Agents", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AgentsRepo
    const lookup = yield* AgentLookup
    const work = yield* WorkItemsRepo
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const admission = yield* AgentAdmission
    const pages = yield* GatedPages
    const serviceAccountBinding = yield* ServiceAccountBinding
    const modelCredentials = yield* ModelCredentials

    const create = exportedFn("Agents.create")(function* (namespaceId: NamespaceId, body: CreateAgentBody) {
      const caller = yield* CurrentCaller
      yield* authorize("agent:create", namespaceRef(namespaceId))
      const id = AgentId.make()
      const principalId = ServicePrincipalId.make()
      const draft: Draft = {
        configurationId: body.configurationId,
        executionMode: body.executionMode ?? "embedded",
        backendId: body.backendId ?? null,
        harnessAuth: body.harnessAuth ?? null,
        plugins: body.plugins,
        repositories: requestedRepositories(body)
      }
      const insert = Effect.gen(function* () {
        const namespace = yield* namespaces.lockForWrite(namespaceId)
        if (namespace.status === "failed") {
          return yield* new ResourceConflict({ message: "The Namespace failed to provision and cannot accept new Agents." })
        }
        yield* admission.admitDraft(namespaceId, draft)
        if (body.workspaceDefaultsId !== undefined && body.workspaceDefaultsId !== (yield* currentWorkspaceDefaultsId)) {
          return yield* new ResourceConflict({ message: "The workspaceDefaultsId is stale; read the current workspace defaults and retry." })
        }
        yield* insertAgent(
          { id, servicePrincipalId: principalId, namespaceId, configurationId: draft.configurationId, ...agentFieldsOf(body, draft) },
          { actorPrincipalId: caller.principalId }
        )
        return toAgent(yield* lookup.require(namespaceId, id, false))
      })
      return yield* sql.withTransaction(insert).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.catchTag("SqlError", conflictOnName)
      )
    })

    const list = exportedFn("Agents.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "agent:read", "agent", { id: "a.id", namespaceId: "a.namespace_id" })
      const rows = yield* pages.page({
        ...inNamespace(sql, namespaceId),
        page: repo.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible)
      })
      return rows.map(toAgent)
    })

    const get = exportedFn("Agents.get")(function* (namespaceId: NamespaceId, agentId: AgentId) {
      yield* authorize("agent:read", agentRef(namespaceId, agentId))
      return toAgent(yield* lookup.require(namespaceId, agentId, false))
    })

    const update = exportedFn("Agents.update")(function* (namespaceId: NamespaceId, agentId: AgentId, body: UpdateAgentBody) {
      const caller = yield* CurrentCaller
      yield* authorize("agent:update", agentRef(namespaceId, agentId))
      const write = Effect.gen(function* () {
        yield* namespaces.lockForWrite(namespaceId)
        const current = yield* lookup.require(namespaceId, agentId, true)
        if (current.status === "deleting") return yield* agentDeleting()
        // Omitted fields keep what is saved, as stored: an unreadable saved field stays as it is.
        const settings = withoutUndefined({ ...current.settings, ...suppliedSettings(body) })
        const harnessAuth = body.harnessAuth !== undefined ? body.harnessAuth : (current.settings.harnessAuth ?? null)
        const draft: Draft = {
          configurationId: body.configurationId,
          executionMode: body.executionMode ?? current.execution_mode,
          backendId: body.backendId !== undefined ? body.backendId : current.backend_id,
          // Only what this request supplies is re-admitted against the caller's grants.
          harnessAuth: body.harnessAuth !== undefined ? body.harnessAuth : null,
          plugins: body.plugins,
          repositories: requestedRepositories(body)
        }
        yield* admission.admitDraft(namespaceId, draft)
        // A kept binding must still suit a changed execution mode (SPEC 2.5).
        const kept = body.harnessAuth === undefined ? readSavedSettings(current.settings).settings.harnessAuth : undefined
        if (kept !== undefined && kept !== null && draft.executionMode !== current.execution_mode) {
          yield* admission.admitTopology(kept, draft.executionMode)
        }
        // Another Configuration can send a kept credential elsewhere: that needs the grant that binds it.
        yield* modelCredentials.admitConfigurationSwap(namespaceId, kept, current.configuration_id, draft.configurationId)
        yield* serviceAccountBinding.admitUpdate(namespaceId, current.settings.harnessAuth, body.harnessAuth, { before: current.backend_id, after: draft.backendId })
        const row = yield* repo.updateDraft({
          id: agentId,
          configuration_id: draft.configurationId,
          execution_mode: draft.executionMode,
          backend_id: draft.backendId,
          settings
        })
        if (body.harnessAuth !== undefined) yield* pinAgentSecrets(agentId, harnessSecretId(harnessAuth as Draft["harnessAuth"]) ?? null)
        yield* audit.record({
          kind: "agent.updated",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "agent", id: agentId },
          details: { configurationId: draft.configurationId, fields: Object.keys(body).sort() }
        })
        return toAgent(row)
      })
      return yield* sql.withTransaction(write).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.catchTag("SqlError", Effect.die))
    })

    const principalNamespace = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ namespace_id: Schema.NullOr(Schema.String) }),
      execute: (id) => sql`SELECT namespace_id FROM principals WHERE id = ${id} AND deleted_at IS NULL`
    })

    /** Whether the principal that started a deletion still holds `agent:delete` on the Agent. */
    const stillMayDelete = (principalId: string, ref: ReturnType<typeof agentRef>) =>
      Effect.gen(function* () {
        const principal = yield* principalNamespace(principalId)
        if (Option.isNone(principal)) return false
        const decision = yield* decide({ principalId, namespaceId: principal.value.namespace_id }, "agent:delete", ref)
        return decision._tag === "Allowed"
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)

    /**
     * SPEC 3: `DELETE` marks the Agent `deleting` (desired `stopped`) and queues its teardown. A
     * repeat replenishes the teardown's attempts (a new work item when the last one failed);
     * another actor may take it over only when the initiator has lost `agent:delete`.
     */
    const remove = exportedFn("Agents.delete")(function* (namespaceId: NamespaceId, agentId: AgentId) {
      const caller = yield* CurrentCaller
      const ref = agentRef(namespaceId, agentId)
      yield* authorize("agent:delete", ref)
      const write = Effect.gen(function* () {
        const current = yield* lookup.require(namespaceId, agentId, true)
        const retry = current.status === "deleting"
        if (retry && current.deletion_initiator !== null && current.deletion_initiator !== caller.principalId) {
          if (yield* stillMayDelete(current.deletion_initiator, ref)) {
            return yield* new ResourceConflict({ message: "Another actor is deleting this Agent." })
          }
        }
        const row = yield* repo.markDeleting({ id: agentId, deletion_initiator: caller.principalId })
        yield* work.enqueue({ kind: AGENT_TEARDOWN, key: agentId, payload: { namespaceId, agentId } })
        yield* audit.record({
          kind: retry ? "agent.deletion-retried" : "agent.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "agent", id: agentId },
          details: { name: current.name }
        })
        return toAgent(row)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, get, update, delete: remove }
  }),
  dependencies: [
    AgentsRepo.Default,
    AgentLookup.Default,
    WorkItemsRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    NamespaceGuard.Default,
    AgentAdmission.Default,
    GatedPages.Default,
    ServiceAccountBinding.Default,
    ModelCredentials.Default
  ]
}) {}
