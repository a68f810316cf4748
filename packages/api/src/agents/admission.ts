/**
 * The checks an Agent draft passes on create, update and deploy (SPEC 2.4, 2.5, 4.4, 7.3):
 * the Configuration, the Backend, the execution mode the Compute Driver offers, the harness
 * binding and its Secret, and plugin selections. Each failure is the SPEC's status and code;
 * nothing here writes.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { InstallationConfiguration } from "@svc/core/config"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { Effect, Option, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { configurationRef } from "../configurations/configurations.js"
import { capabilitiesOf } from "../installation/capabilities.js"
import { admitPlugins } from "./pluginAdmission.js"
import { secretRef } from "../secrets/policy.js"
import { ServiceAccountBinding } from "./serviceAccountBinding.js"
import { credentialSourceBinding } from "./credentialSourceBinding.js"
import { CredentialSourcesRepo } from "@svc/core/db"
import type { ExecutionMode, HarnessAuth, Plugins } from "@svc/core/api"
import type { ConfigurationId } from "@svc/core/schema"
import { RepositoryAdmission, type RepositoryRequest } from "./repositoryAdmission.js"

export interface Draft {
  readonly configurationId: ConfigurationId
  readonly executionMode: ExecutionMode
  readonly backendId: string | null
  readonly harnessAuth: HarnessAuth | null
  readonly plugins: Plugins | undefined
  /** Repositories this request asks for (`requestedRepositories`); undefined: none supplied. */
  readonly repositories?: ReadonlyArray<RepositoryRequest> | undefined
}

/** A draft's settings without its Configuration (Agent provisioning creates that one). */
export type LaunchDraft = Omit<Draft, "configurationId">

/** The Secret a harness binding reads, if any. */
export const harnessSecretId = (auth: HarnessAuth | null): string | undefined =>
  auth !== null && (auth.method === "api_key" || auth.method === "direct_token") ? auth.source.id : undefined

const Key = Schema.Struct({ id: Schema.String, namespace_id: Schema.String })

/**
 * The checks as a service: the client, the authorization and the Installation are taken once.
 * The rows they lock FOR KEY SHARE (the Configuration, the harness Secret) stay locked for the
 * caller's transaction, so what was admitted cannot vanish before it commits.
 */
export class AgentAdmission extends Effect.Service<AgentAdmission>()("@svc/api/AgentAdmission", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { authorize } = yield* Authorization
    const installation = yield* InstallationConfiguration
    const serviceAccounts = yield* ServiceAccountBinding
    const admitCredentialSource = credentialSourceBinding(authorize, yield* CredentialSourcesRepo)
    const repositories = yield* RepositoryAdmission

    const configurationKind = SqlSchema.findOne({
      Request: Key,
      Result: Schema.Struct({ kind: Schema.String }),
      execute: (key) => sql`SELECT kind FROM configurations WHERE id = ${key.id} AND namespace_id = ${key.namespace_id} FOR KEY SHARE`
    })

    const secretKey = SqlSchema.findOne({
      Request: Key,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (key) => sql`SELECT id FROM secrets WHERE id = ${key.id} AND namespace_id = ${key.namespace_id} FOR KEY SHARE`
    })

    /** SPEC 4.4: the caller's exact `read` on a same-Namespace Configuration of kind `agent`. */
    const admitConfiguration = (namespaceId: string, configurationId: string) =>
      Effect.gen(function* () {
        yield* authorize("configuration:read", configurationRef(namespaceId, configurationId))
        const row = yield* configurationKind({ id: configurationId, namespace_id: namespaceId }).pipe(Effect.orDie)
        if (Option.isNone(row)) return yield* new NotFound({ message: "The Configuration does not exist in this Namespace." })
        if (row.value.kind !== "agent") return yield* new ResourceConflict({ message: "The Configuration is not of kind agent." })
      })

    /** The Secret exists in this Namespace and the caller may `operate` it (SPEC 2.5). */
    const admitSecret = (namespaceId: string, source: { readonly namespaceId: string; readonly id: string }) =>
      Effect.gen(function* () {
        if (source.namespaceId !== namespaceId) {
          return yield* new NotFound({ message: "The harness Secret does not exist in this Namespace." })
        }
        yield* authorize("secret:operate", secretRef(namespaceId, source.id))
        const row = yield* secretKey({ id: source.id, namespace_id: namespaceId }).pipe(Effect.orDie)
        if (Option.isNone(row)) return yield* new NotFound({ message: "The harness Secret does not exist in this Namespace." })
      })

    /**
     * The binding's method against the execution it would run in (SPEC 2.5): no grants, so an
     * update also checks a kept binding against a changed execution mode.
     */
    const admitTopology = (auth: HarnessAuth, executionMode: ExecutionMode) =>
      Effect.gen(function* () {
        const dedicatedOffered = (capabilitiesOf(installation).agentProvisioning.executionModes as ReadonlyArray<string>).includes("dedicated")
        const needsDedicated = auth.method === "direct_token" || auth.method === "provider_service_account" || auth.method === "credential_source"
        if (needsDedicated && (!dedicatedOffered || executionMode !== "dedicated")) {
          return yield* new ResourceConflict({
            message: `Harness authentication ${auth.method} needs dedicated execution, which this Agent or Installation does not offer.`
          })
        }
        if (auth.method === "runtime" && (installation.drivers.compute.id !== "local" || executionMode !== "embedded")) {
          return yield* new ResourceConflict({ message: "Harness authentication runtime needs host-embedded execution." })
        }
        if (auth.method === "credential_source" && installation.drivers.credentialGateway === undefined) {
          return yield* new ResourceConflict({ message: "Harness authentication credential_source needs a Credential Gateway." })
        }
      })

    /** The harness binding against what this Installation can run (SPEC 2.5, 4.6). */
    const admitHarness = (namespaceId: string, draft: LaunchDraft) =>
      Effect.gen(function* () {
        const auth = draft.harnessAuth
        if (auth === null) return
        yield* admitTopology(auth, draft.executionMode)
        if (auth.method === "credential_source") return yield* admitCredentialSource(namespaceId, auth.sourceId)
        if (auth.method === "provider_service_account") {
          return yield* serviceAccounts.admit(namespaceId, auth.serviceAccountId, draft.backendId)
        }
        const secretId = harnessSecretId(auth)
        if (secretId !== undefined && (auth.method === "api_key" || auth.method === "direct_token")) {
          yield* admitSecret(namespaceId, auth.source)
        }
      })

    /** Every check of a draft's launch settings, in the order SPEC 7.3 lists its conditions. */
    const admitLaunchSettings = (namespaceId: string, draft: LaunchDraft) =>
      Effect.gen(function* () {
        if (draft.backendId !== null) {
          const backend = installation.backends.find((b) => b.id === draft.backendId)
          if (backend === undefined) return yield* new NotFound({ message: "The Backend does not exist." })
          if (backend.type !== "model_accounts") {
            return yield* new ResourceConflict({ message: "The Backend is not of type model_accounts." })
          }
        }
        const modes = capabilitiesOf(installation).agentProvisioning.executionModes as ReadonlyArray<string>
        if (!modes.includes(draft.executionMode)) {
          return yield* new ResourceConflict({ message: `Execution mode ${draft.executionMode} is not offered by this Installation.` })
        }
        yield* admitHarness(namespaceId, draft)
        yield* admitPlugins(installation, draft.plugins)
        yield* repositories.admit(namespaceId, draft.repositories)
      })

    /** Every check of a draft: its Configuration, then its launch settings. */
    const admitDraft = (namespaceId: string, draft: Draft) =>
      Effect.zipRight(admitConfiguration(namespaceId, draft.configurationId), admitLaunchSettings(namespaceId, draft))

    return { admitDraft, admitLaunchSettings, admitTopology }
  }),
  dependencies: [Authorization.Default, ServiceAccountBinding.Default, CredentialSourcesRepo.Default, RepositoryAdmission.Default]
}) {}
