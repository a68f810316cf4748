/**
 * Response bodies of the Agents API (SPEC 2.4, 2.6, 2.7). Request bodies and the field rules
 * they share with Presets and provisioning live in `fields.ts`.
 */
import { AgentId, ConfigurationId, JsonValue, NamespaceId, RevisionId, SecretId, Timestamp } from "../../schema/index.js"
import { Schema } from "effect"
import { ConfigurationGeneration } from "../configurations/schemas.js"
import { ExecutionMode, HarnessAuth, PluginApprovers, Plugins, RepositoryAccess, RepositoryBindings } from "./fields.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

export const SettingsField = Schema.Literal("harnessAuth", "plugins", "pluginApprovers", "repositoryBindings", "repositoryAccess")
export type SettingsField = typeof SettingsField.Type

/** SPEC 2.4: saved settings that no longer decode are omitted and named here. */
export const ConfigurationReadError = Schema.Struct({
  code: Schema.Literal("SAVED_CONFIGURATION_UNREADABLE"),
  field: SettingsField
}).annotations({ identifier: "ConfigurationReadError" })

export const Agent = Schema.Struct({
  id: AgentId,
  namespaceId: NamespaceId,
  name: Schema.String,
  configurationId: ConfigurationId,
  executionMode: ExecutionMode,
  backendId: Schema.NullOr(Schema.String),
  harnessAuth: optional(Schema.NullOr(HarnessAuth)),
  plugins: optional(Plugins),
  pluginApprovers: optional(Schema.NullOr(PluginApprovers)),
  repositoryBindings: optional(RepositoryBindings),
  repositoryAccess: optional(RepositoryAccess),
  workspaceDefaultsId: optional(Schema.String),
  servicePrincipalId: Schema.String,
  status: Schema.Literal("active", "deleting"),
  desiredRuntimeState: Schema.Literal("running", "stopped"),
  activeRevisionId: optional(RevisionId),
  configurationReadError: optional(ConfigurationReadError),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "Agent" })
export type Agent = typeof Agent.Type

const ComputeRef = Schema.Struct({ id: Schema.String, implementation: Schema.String })

/**
 * SPEC 2.6: the service account's credential a `provider_service_account` revision froze at
 * deploy: its kind and, for a native account's `api_key`, the Secret reference. No bytes, no
 * upstream metadata (SPEC 2.5).
 */
export const RevisionCredential = Schema.Struct({
  kind: Schema.Literal("access_token", "api_key"),
  secretRef: optional(Schema.Struct({ id: SecretId, key: Schema.String }))
}).annotations({ identifier: "RevisionCredential" })
export type RevisionCredential = typeof RevisionCredential.Type

export const AgentRevision = Schema.Struct({
  id: RevisionId,
  agentId: AgentId,
  namespaceId: NamespaceId,
  backendId: Schema.NullOr(Schema.String),
  compute: ComputeRef,
  configuration: Schema.Record({ key: Schema.String, value: JsonValue }),
  configurationGeneration: ConfigurationGeneration,
  configurationId: ConfigurationId,
  configurationKind: Schema.Literal("agent"),
  secretBindings: Schema.Record({ key: Schema.String, value: JsonValue }),
  harness: Schema.Struct({
    id: Schema.String,
    mode: ExecutionMode,
    /** Omitted when unreadable (`configurationReadError`). */
    auth: optional(Schema.NullOr(HarnessAuth)),
    /** provider_service_account only; absent from revisions deployed before it was frozen. */
    credential: optional(RevisionCredential)
  }),
  plugins: Schema.Struct({ driver: ComputeRef, plugins: optional(Plugins) }),
  pluginApprovers: optional(Schema.NullOr(PluginApprovers)),
  repositoryCredentials: Schema.Array(JsonValue),
  configurationReadError: optional(ConfigurationReadError),
  /**
   * Extension (DESIGN §18 rollback): the revision whose frozen snapshot this one was made from.
   * Present only on revisions made by `POST .../revisions/{revisionId}/redeploy`.
   */
  rolledBackFrom: optional(Schema.NullOr(RevisionId)),
  createdAt: Timestamp
}).annotations({ identifier: "AgentRevision" })
export type AgentRevision = typeof AgentRevision.Type

/** The most recent attempt of asynchronous work. */
export const WorkAttempt = Schema.Struct({ at: Timestamp, code: Schema.String, message: Schema.String })

/** The public states of asynchronous Agent work. */
export const WorkState = Schema.Literal("queued", "running", "succeeded", "failed")

export const DeploymentStatus = Schema.Struct({
  deploymentId: RevisionId,
  namespaceId: NamespaceId,
  agentId: AgentId,
  status: WorkState,
  error: Schema.NullOr(Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    data: optional(Schema.Record({ key: Schema.String, value: JsonValue }))
  })),
  progress: Schema.NullOr(Schema.Struct({ lastAttempt: Schema.NullOr(WorkAttempt), nextAttemptAt: Schema.NullOr(Timestamp) })),
  warnings: Schema.Array(Schema.Struct({ code: Schema.Literal("PLUGIN_INSTALL_FAILED", "PLUGIN_AUTH_REQUIRED"), pluginId: Schema.String }))
}).annotations({ identifier: "DeploymentStatus" })
export type DeploymentStatus = typeof DeploymentStatus.Type
