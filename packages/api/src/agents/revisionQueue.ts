/**
 * What every new revision goes through, whether it freezes the saved draft (deploy) or an earlier
 * revision's snapshot (rollback, DESIGN §18): the Agent not deleting, the Namespace ready, the
 * draft admission of SPEC 4.4 and 7.3, every delivered Secret existing and operable by the caller
 * and the Agent principal; then the revision, desired `running` and its work item, in the
 * caller's transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { ExecutionMode, HarnessAuth, Plugins } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { InstallationConfiguration } from "@svc/core/config"
import { CATALOG_VERSION } from "@svc/core/drivers/plugin"
import { type AgentRow, AgentsRepo, NamespacesRepo, RevisionsRepo, type RevisionSnapshot, WorkItemsRepo } from "@svc/core/db"
import { AgentDeleting, NamespaceNotReady, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller } from "@svc/core/iam"
import { ConfigurationId, type NamespaceId, reservedEnvironmentName, RevisionId } from "@svc/core/schema"
import { AGENT_DEPLOY, deliveredSecrets } from "@svc/core/tenancy"
import { Effect, Option, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { secretRef } from "../secrets/policy.js"
import { AgentAdmission } from "./admission.js"
import { harnessAtDeploy } from "./credentialSourceBinding.js"
import { toRevision } from "./deploymentViews.js"
import { ServiceAccountBinding } from "./serviceAccountBinding.js"

/** The harness every revision runs: an OpenClaw gateway. */
export const HARNESS_ID = "openclaw"

/** Any further fields are kept as they are: the revision freezes the bindings whole. */
const Rest = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const BindingRef = Schema.Struct({ source: Schema.Struct({ id: Schema.String }, Rest) }, Rest)

/** What a revision freezes of its Configuration. */
export const FrozenConfiguration = Schema.Struct({
  id: ConfigurationId,
  // bigint: the driver returns it as text.
  generation: Schema.Union(Schema.Number, Schema.NumberFromString),
  values: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  secret_bindings: Schema.Record({ key: Schema.String, value: BindingRef })
})
export type FrozenConfiguration = typeof FrozenConfiguration.Type

/** What a new revision is made from, after the Agent and its Namespace were checked. */
export interface RevisionSource {
  readonly configurationId: ConfigurationId
  readonly executionMode: ExecutionMode
  readonly backendId: string | null
  readonly harnessAuth: HarnessAuth
  readonly plugins: Plugins | undefined
  readonly pluginApprovers: unknown
  readonly repositoryCredentials: ReadonlyArray<unknown>
  /** Read after the draft's admission, so a caller without Configuration `read` learns nothing of it. */
  readonly configuration: Effect.Effect<FrozenConfiguration, NotFound>
  /** Set by a rollback: the revision whose snapshot this is (audited and shown as `rolledBackFrom`). */
  readonly rolledBackFrom?: RevisionId
}

const agentDeleting = () => new AgentDeleting({ message: "The Agent is being deleted." })

export class RevisionQueue extends Effect.Service<RevisionQueue>()("@svc/api/RevisionQueue", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const agents = yield* AgentsRepo
    const revisions = yield* RevisionsRepo
    const namespaces = yield* NamespacesRepo
    const work = yield* WorkItemsRepo
    const audit = yield* AuditLog
    const { authorize, authorizeAgentPrincipal } = yield* Authorization
    const admission = yield* AgentAdmission
    const serviceAccounts = yield* ServiceAccountBinding
    const installation = yield* InstallationConfiguration
    const admitHarnessAtDeploy = harnessAtDeploy(installation, authorizeAgentPrincipal)

    /** FOR KEY SHARE: the Secrets cannot be deleted before the revision that pins them commits. */
    const existingSecrets = SqlSchema.findAll({
      Request: Schema.Struct({ namespaceId: Schema.String, ids: Schema.Array(Schema.String) }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (req) => sql`
        SELECT id FROM secrets WHERE namespace_id = ${req.namespaceId} AND id IN ${sql.in(req.ids)} FOR KEY SHARE
      `
    })

    /**
     * Every Secret a revision delivers needs the caller's and the Agent principal's exact `operate`
     * (SPEC 4.4): a missing grant of the Agent principal is the operator's to fix, so it is 403 with
     * the principal named, never a deployment that fails later. A Secret deleted since it was bound
     * (an old revision's, on rollback) is 404.
     */
    const admitSecrets = (namespaceId: NamespaceId, principalId: string, secretIds: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        for (const secretId of secretIds) {
          const ref = secretRef(namespaceId, secretId)
          yield* authorize("secret:operate", ref)
          yield* authorizeAgentPrincipal(principalId, "secret:operate", ref)
        }
        if (secretIds.length === 0) return
        const found = new Set((yield* existingSecrets({ namespaceId, ids: secretIds }).pipe(Effect.orDie)).map((row) => row.id))
        const missing = secretIds.find((id) => !found.has(id))
        if (missing !== undefined) return yield* new NotFound({ message: `The Secret ${missing} the revision delivers does not exist.` })
      })

    /**
     * Admits a new revision of `agent` (locked by the caller) from `source` and queues its
     * deployment. Call inside a transaction.
     */
    const admitAndQueue = <E, R>(namespaceId: NamespaceId, agent: AgentRow, source: Effect.Effect<RevisionSource, E, R>) =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        if (agent.status === "deleting") return yield* agentDeleting()
        const namespace = yield* namespaces.lockForShare(namespaceId)
        if (Option.getOrUndefined(namespace)?.status !== "ready") {
          return yield* new NamespaceNotReady({ message: "The Namespace's infrastructure is not ready for deployment." })
        }
        const from = yield* source
        yield* admission.admitDraft(namespaceId, {
          configurationId: from.configurationId,
          executionMode: from.executionMode,
          backendId: from.backendId,
          harnessAuth: from.harnessAuth,
          plugins: from.plugins
        })
        yield* admitHarnessAtDeploy(namespaceId, agent.service_principal_id, from.harnessAuth)
        // A rollback freezes the account's credential as it is now, as a deploy does.
        const credential = yield* serviceAccounts.freeze(namespaceId, from.harnessAuth)
        const configuration = yield* from.configuration
        // Admission refuses reserved destinations (SPEC 2.8); one saved before it was reserved is not delivered either.
        const reserved = Object.keys(configuration.secret_bindings).find((name) => reservedEnvironmentName(name) !== undefined)
        if (reserved !== undefined) {
          return yield* new ResourceConflict({
            message: `The Configuration binds a Secret to the reserved variable ${reserved}; update the Configuration before deploying.`
          })
        }
        const secretIds = [...new Set(deliveredSecrets(configuration.secret_bindings, from.harnessAuth).map((d) => d.secretId))].sort()
        yield* admitSecrets(namespaceId, agent.service_principal_id, secretIds)

        const id = RevisionId.make()
        const snapshot: RevisionSnapshot = {
          id,
          agentId: agent.id,
          namespaceId,
          backendId: from.backendId,
          compute: { id: installation.drivers.compute.id, implementation: installation.drivers.compute.id },
          configuration: configuration.values,
          configurationGeneration: configuration.generation,
          configurationId: configuration.id,
          configurationKind: "agent",
          secretBindings: configuration.secret_bindings,
          harness: { id: HARNESS_ID, mode: from.executionMode, auth: from.harnessAuth, ...(credential === undefined ? {} : { credential }) },
          plugins: {
            driver: installation.drivers.plugin === undefined
              ? { id: "none", implementation: "none" }
              : { id: installation.drivers.plugin.id, implementation: `${installation.drivers.plugin.id}@${CATALOG_VERSION}` },
            plugins: from.plugins ?? {}
          },
          pluginApprovers: from.pluginApprovers,
          repositoryCredentials: from.repositoryCredentials
        }
        const row = yield* revisions.insert({
          id,
          agent_id: agent.id,
          namespace_id: namespaceId,
          configuration_id: configuration.id,
          configuration_generation: configuration.generation,
          snapshot,
          rolled_back_from: from.rolledBackFrom ?? null
        }, secretIds)
        yield* agents.desireRunning(agent.id)
        yield* work.enqueue({ kind: AGENT_DEPLOY, key: id, payload: { namespaceId, agentId: agent.id, revisionId: id } })
        yield* audit.record({
          kind: from.rolledBackFrom === undefined ? "agent.deployed" : "agent.rolled-back",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "agent", id: agent.id },
          details: {
            revisionId: id,
            configurationId: configuration.id,
            configurationGeneration: configuration.generation,
            ...(from.rolledBackFrom === undefined ? {} : { rolledBackFrom: from.rolledBackFrom })
          }
        })
        return toRevision(row)
      })

    return { admitAndQueue }
  }),
  dependencies: [
    AgentsRepo.Default,
    RevisionsRepo.Default,
    NamespacesRepo.Default,
    WorkItemsRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    AgentAdmission.Default,
    ServiceAccountBinding.Default
  ]
}) {}
