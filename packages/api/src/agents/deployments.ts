/**
 * Deployments (SPEC 2.6, 2.7, 3, 4.4 rule 1): `deploy` snapshots the saved draft into an
 * immutable revision and queues its work in one transaction; `stop` sets the desired state;
 * the deployment status reads persisted state only (the work item and the revision row).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { PageParams } from "@svc/core/api"
import { type HarnessAuth, readSavedSettings } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { InstallationConfiguration } from "@svc/core/config"
import { AgentsRepo, NamespacesRepo, RevisionsRepo, type RevisionSnapshot, WorkItemsRepo } from "@svc/core/db"
import { AgentDeleting, Forbidden, NamespaceNotReady, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, decide, visibleTo } from "@svc/core/iam"
import { type AgentId, ConfigurationId, type NamespaceId, RevisionId } from "@svc/core/schema"
import { AGENT_DEPLOY, AGENT_STOP, deliveredSecrets } from "@svc/core/tenancy"
import { Effect, Option, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { pageOf } from "../iam/access.js"
import { secretRef } from "../secrets/policy.js"
import { AgentAdmission } from "./admission.js"
import { toDeployment, toRevision } from "./deploymentViews.js"
import { agentRef, revisionRef } from "./policy.js"
import { AgentLookup } from "./lookup.js"
import { toAgent } from "./views.js"

/** The harness every revision runs: an OpenClaw gateway. */
export const HARNESS_ID = "openclaw"

/** Any further fields are kept as they are: the revision freezes the bindings whole. */
const Rest = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const BindingRef = Schema.Struct({ source: Schema.Struct({ id: Schema.String }, Rest) }, Rest)

/** What a revision freezes of its Configuration (the Configurations feature owns the table). */
const ConfigurationRow = Schema.Struct({
  id: ConfigurationId,
  // bigint: the driver returns it as text.
  generation: Schema.Union(Schema.Number, Schema.NumberFromString),
  values: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  secret_bindings: Schema.Record({ key: Schema.String, value: BindingRef })
})

const agentDeleting = () => new AgentDeleting({ message: "The Agent is being deleted." })

export class Deployments extends Effect.Service<Deployments>()("@svc/api/Deployments", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const agents = yield* AgentsRepo
    const lookup = yield* AgentLookup
    const revisions = yield* RevisionsRepo
    const namespaces = yield* NamespacesRepo
    const work = yield* WorkItemsRepo
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const admission = yield* AgentAdmission
    const installation = yield* InstallationConfiguration

    /** FOR KEY SHARE: the Configuration cannot be deleted before the revision that froze it commits. */
    const lockConfiguration = SqlSchema.findOne({
      Request: ConfigurationId,
      Result: ConfigurationRow,
      execute: (id) => sql`SELECT id, generation, "values", secret_bindings FROM configurations WHERE id = ${id} FOR KEY SHARE`
    })

    /**
     * Every Secret a revision delivers needs the caller's and the Agent principal's exact `operate`
     * (SPEC 4.4): a missing grant of the Agent principal is the operator's to fix, so it is 403 with
     * the principal named, never a deployment that fails later.
     */
    const authorizeSecrets = (namespaceId: NamespaceId, principalId: string, secretIds: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        for (const secretId of secretIds) {
          const ref = secretRef(namespaceId, secretId)
          yield* authorize("secret:operate", ref)
          const decision = yield* decide({ principalId, namespaceId }, "secret:operate", ref).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.orDie
          )
          if (decision._tag !== "Allowed") {
            return yield* new Forbidden({ message: `The Agent's service principal ${principalId} lacks secret:operate on ${secretId}.` })
          }
        }
      })

    const deploy = Effect.fn("Agents.deploy")(function* (namespaceId: NamespaceId, agentId: AgentId) {
      const caller = yield* CurrentCaller
      yield* authorize("agent:deploy", agentRef(namespaceId, agentId))
      const write = Effect.gen(function* () {
        const agent = yield* lookup.require(namespaceId, agentId, true)
        if (agent.status === "deleting") return yield* agentDeleting()
        const namespace = yield* namespaces.lockForShare(namespaceId)
        if (Option.getOrUndefined(namespace)?.status !== "ready") {
          return yield* new NamespaceNotReady({ message: "The Namespace's infrastructure is not ready for deployment." })
        }
        const { settings, unreadable } = readSavedSettings(agent.settings)
        if (unreadable.length > 0) {
          return yield* new ResourceConflict({ message: `The Agent's saved ${unreadable[0]} is unreadable; update it before deploying.` })
        }
        const harnessAuth: HarnessAuth | null = settings.harnessAuth ?? null
        if (harnessAuth === null) return yield* new ResourceConflict({ message: "The Agent has no harness authentication." })
        yield* admission.admitDraft(namespaceId, {
          configurationId: agent.configuration_id,
          executionMode: agent.execution_mode,
          backendId: agent.backend_id,
          harnessAuth,
          plugins: settings.plugins
        })
        const found = yield* lockConfiguration(agent.configuration_id).pipe(Effect.orDie)
        if (Option.isNone(found)) return yield* new NotFound({ message: "The Configuration does not exist in this Namespace." })
        const configuration = found.value
        const secretIds = [...new Set(deliveredSecrets(configuration.secret_bindings, harnessAuth).map((d) => d.secretId))].sort()
        yield* authorizeSecrets(namespaceId, agent.service_principal_id, secretIds)

        const id = RevisionId.make()
        const snapshot: RevisionSnapshot = {
          id,
          agentId: agent.id,
          namespaceId,
          backendId: agent.backend_id,
          compute: { id: installation.drivers.compute.id, implementation: installation.drivers.compute.id },
          configuration: configuration.values,
          configurationGeneration: configuration.generation,
          configurationId: configuration.id,
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
        const row = yield* revisions.insert({
          id,
          agent_id: agentId,
          namespace_id: namespaceId,
          configuration_id: configuration.id,
          configuration_generation: configuration.generation,
          snapshot
        }, secretIds)
        yield* agents.desireRunning(agentId)
        yield* work.enqueue({ kind: AGENT_DEPLOY, key: id, payload: { namespaceId, agentId, revisionId: id } })
        yield* audit.record({
          kind: "agent.deployed",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "agent", id: agentId },
          details: { revisionId: id, configurationId: configuration.id, configurationGeneration: configuration.generation }
        })
        return toRevision(row)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    /** SPEC 3: desired `stopped`; the worker removes execution and clears `activeRevisionId`. Repeat is safe. */
    const stop = Effect.fn("Agents.stop")(function* (namespaceId: NamespaceId, agentId: AgentId) {
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

    const revision = Effect.fn("Agents.revision")(function* (namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId) {
      yield* authorize("agent_revision:read", revisionRef(namespaceId, revisionId))
      return toRevision(yield* requireRevision(namespaceId, agentId, revisionId))
    })

    const list = Effect.fn("Agents.revisions")(function* (namespaceId: NamespaceId, agentId: AgentId, params: PageParams) {
      const caller = yield* CurrentCaller
      yield* authorize("agent:read", agentRef(namespaceId, agentId))
      yield* lookup.require(namespaceId, agentId, false)
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "agent_revision:read", "agent_revision", { id: "r.id", namespaceId: "r.namespace_id" })
      const rows = yield* revisions.page({ agent_id: agentId, namespace_id: namespaceId, after: page.after, limit: page.limit }, visible)
      return rows.map(toRevision)
    })

    /** SPEC 2.7, from persisted state only: the revision's work item and the revision row. */
    const deployment = Effect.fn("Agents.deployment")(function* (namespaceId: NamespaceId, agentId: AgentId, deploymentId: RevisionId) {
      yield* authorize("agent_revision:read", revisionRef(namespaceId, deploymentId))
      const row = yield* requireRevision(namespaceId, agentId, deploymentId)
      return toDeployment(namespaceId, agentId, row, yield* work.status(AGENT_DEPLOY, deploymentId))
    })

    return { deploy, stop, revision, revisions: list, deployment }
  }),
  dependencies: [
    AgentsRepo.Default,
    AgentLookup.Default,
    RevisionsRepo.Default,
    NamespacesRepo.Default,
    WorkItemsRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    AgentAdmission.Default
  ]
}) {}
