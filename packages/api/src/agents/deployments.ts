/**
 * Deployments (SPEC 2.6, 2.7, 3, 4.4 rule 1): `deploy` snapshots the saved draft into an
 * immutable revision and queues its work in one transaction; `stop` sets the desired state;
 * the deployment status reads persisted state only (the work item and the revision row).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { PageParams } from "@svc/core/api"
import { type HarnessAuth, readSavedSettings } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { AgentsRepo, RevisionsRepo, WorkItemsRepo } from "@svc/core/db"
import { AgentDeleting, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { type AgentId, ConfigurationId, type NamespaceId, type RevisionId } from "@svc/core/schema"
import { AGENT_DEPLOY, AGENT_STOP } from "@svc/core/tenancy"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages } from "../auth/gatedPage.js"
import { pageOf } from "../iam/access.js"
import { toDeployment, toRevision } from "./deploymentViews.js"
import { FrozenConfiguration, RevisionQueue, type RevisionSource } from "./revisionQueue.js"
import { agentRef, revisionRef } from "./policy.js"
import { AgentLookup } from "./lookup.js"
import { agentNotFound, toAgent } from "./views.js"
import { RepositoryAdmission, requestedRepositories } from "./repositoryAdmission.js"
import { exportedFn } from "@svc/core/observability"

/** FOR KEY SHARE: the Configuration cannot be deleted before the revision that froze it commits. */
const lockConfigurationRow = (sql: SqlClient.SqlClient) => SqlSchema.findOne({
  Request: ConfigurationId,
  Result: FrozenConfiguration,
  execute: (id) => sql`SELECT id, generation, "values", secret_bindings FROM configurations WHERE id = ${id} FOR KEY SHARE`
})

const agentDeleting = () => new AgentDeleting({ message: "The Agent is being deleted." })

export class Deployments extends Effect.Service<Deployments>()("@svc/api/Deployments", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const agents = yield* AgentsRepo
    const lookup = yield* AgentLookup
    const revisions = yield* RevisionsRepo
    const work = yield* WorkItemsRepo
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const queue = yield* RevisionQueue
    const pages = yield* GatedPages
    const repositoryGrants = yield* RepositoryAdmission
    const lockConfiguration = lockConfigurationRow(sql)

    /** SPEC 4.4 rule 1: the saved draft, frozen into a new revision and queued. */
    const deploy = exportedFn("Agents.deploy")(function* (namespaceId: NamespaceId, agentId: AgentId) {
      yield* authorize("agent:deploy", agentRef(namespaceId, agentId))
      const write = Effect.gen(function* () {
        const agent = yield* lookup.require(namespaceId, agentId, true)
        const draft = Effect.gen(function* () {
          const { settings, unreadable } = readSavedSettings(agent.settings)
          if (unreadable.length > 0) {
            return yield* new ResourceConflict({ message: `The Agent's saved ${unreadable[0]} is unreadable; update it before deploying.` })
          }
          const harnessAuth: HarnessAuth | null = settings.harnessAuth ?? null
          if (harnessAuth === null) return yield* new ResourceConflict({ message: "The Agent has no harness authentication." })
          return {
            configurationId: agent.configuration_id,
            executionMode: agent.execution_mode,
            backendId: agent.backend_id,
            harnessAuth,
            plugins: settings.plugins,
            pluginApprovers: settings.pluginApprovers ?? null,
            repositoryCredentials: yield* repositoryGrants.grants(namespaceId, requestedRepositories(settings)),
            configuration: Effect.flatMap(lockConfiguration(agent.configuration_id).pipe(Effect.orDie), Option.match({
              onNone: () => Effect.fail(new NotFound({ message: "The Configuration does not exist in this Namespace." })),
              onSome: Effect.succeed
            }))
          } satisfies RevisionSource
        })
        return yield* queue.admitAndQueue(namespaceId, agent, draft)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** SPEC 3: desired `stopped`; the worker removes execution and clears `activeRevisionId`. Repeat is safe. */
    const stop = exportedFn("Agents.stop")(function* (namespaceId: NamespaceId, agentId: AgentId) {
      const caller = yield* CurrentCaller
      yield* authorize("agent:operate", agentRef(namespaceId, agentId))
      const write = Effect.gen(function* () {
        const agent = yield* lookup.require(namespaceId, agentId, true)
        if (agent.status === "deleting") return yield* agentDeleting()
        const row = yield* agents.desireStopped(agentId)
        yield* work.enqueue({ kind: AGENT_STOP, key: agentId, payload: { namespaceId, agentId } })
        yield* audit.record({
          kind: "agent.stopped",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "agent", id: agentId }
        })
        return toAgent(row)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    const requireRevision = (namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId) =>
      lookup.requireRevision(namespaceId, agentId, revisionId)

    const revision = exportedFn("Agents.revision")(function* (namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId) {
      yield* authorize("agent_revision:read", revisionRef(namespaceId, revisionId))
      return toRevision(yield* requireRevision(namespaceId, agentId, revisionId))
    })

    const list = exportedFn("Agents.revisions")(function* (namespaceId: NamespaceId, agentId: AgentId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "agent_revision:read", "agent_revision", { id: "r.id", namespaceId: "r.namespace_id" })
      const rows = yield* pages.page({
        gates: [{ permission: "agent:read", resource: agentRef(namespaceId, agentId) }],
        parentLive: agents.liveSql({ id: agentId, namespace_id: namespaceId }),
        missing: agentNotFound,
        page: revisions.page({ agent_id: agentId, namespace_id: namespaceId, after: page.after, limit: page.limit }, visible)
      })
      return rows.map(toRevision)
    })

    /** SPEC 2.7, from persisted state only: the revision's work item and the revision row. */
    const deployment = exportedFn("Agents.deployment")(function* (namespaceId: NamespaceId, agentId: AgentId, deploymentId: RevisionId) {
      yield* authorize("agent_revision:read", revisionRef(namespaceId, deploymentId))
      const row = yield* requireRevision(namespaceId, agentId, deploymentId)
      return toDeployment(namespaceId, agentId, row, yield* work.status(AGENT_DEPLOY, deploymentId))
    })

    /**
     * The status for a stream the caller was already authorized for (the deployment events); none
     * when the revision is gone (its Agent was removed).
     */
    const currentStatus = (namespaceId: NamespaceId, agentId: AgentId, deploymentId: RevisionId) =>
      Effect.flatMap(revisions.findLive({ id: deploymentId, agent_id: agentId, namespace_id: namespaceId }), (row) =>
        Option.isNone(row)
          ? Effect.succeedNone
          : Effect.map(work.status(AGENT_DEPLOY, deploymentId), (status) => Option.some(toDeployment(namespaceId, agentId, row.value, status))))

    return { deploy, stop, revision, revisions: list, deployment, currentStatus }
  }),
  dependencies: [
    AgentsRepo.Default,
    AgentLookup.Default,
    RevisionsRepo.Default,
    WorkItemsRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    RevisionQueue.Default,
    GatedPages.Default,
    RepositoryAdmission.Default
  ]
}) {}
