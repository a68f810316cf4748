// TEMPORARY (not committed): stand-in until the agentfields branch merges.
import { ConfigurationId, NamespaceId, OneOf, RequestBody, SecretId, ServiceAccountId, CredentialSourceId } from "@svc/core/schema"
import { Schema } from "effect"
import { ResourceName } from "../iam/schemas.js"
export const AgentName = ResourceName
export const ExecutionMode = OneOf("embedded", "dedicated")
export type ExecutionMode = typeof ExecutionMode.Type
export const BackendIdField = Schema.NullOr(Schema.String)
export const SecretSource = Schema.Struct({ kind: Schema.Literal("secret"), namespaceId: NamespaceId, id: SecretId })
export const HarnessAuth = Schema.Union(
  Schema.Struct({ method: Schema.Literal("api_key"), source: SecretSource }),
  Schema.Struct({ method: Schema.Literal("direct_token"), source: SecretSource }),
  Schema.Struct({ method: Schema.Literal("provider_service_account"), serviceAccountId: ServiceAccountId }),
  Schema.Struct({ method: Schema.Literal("credential_source"), sourceId: CredentialSourceId }),
  Schema.Struct({ method: Schema.Literal("runtime") })
)
export type HarnessAuth = typeof HarnessAuth.Type
export const Plugins = Schema.Record({ key: Schema.String, value: Schema.Struct({ enabled: Schema.Boolean }) })
export type Plugins = typeof Plugins.Type
const Approver = Schema.Struct({ channel: Schema.String, id: Schema.String })
export const PluginApprovers = Schema.Array(Approver)
export const RepositoryBindings = Schema.Array(Schema.Struct({ repositoryRef: Schema.String, profile: Schema.optional(Schema.String) }))
export const RepositoryAccess = Schema.Struct({ defaultProfile: Schema.String, repositories: Schema.Array(Schema.Struct({ repositoryRef: Schema.String, profile: Schema.optional(Schema.String) })) })
export const CreateAgent = RequestBody({
  name: ResourceName, configurationId: ConfigurationId,
  executionMode: Schema.optionalWith(ExecutionMode, { exact: true }),
  backendId: Schema.optionalWith(BackendIdField, { exact: true }),
  harnessAuth: Schema.optionalWith(Schema.NullOr(HarnessAuth), { exact: true }),
  plugins: Schema.optionalWith(Plugins, { exact: true }),
  pluginApprovers: Schema.optionalWith(PluginApprovers, { exact: true }),
  repositoryBindings: Schema.optionalWith(RepositoryBindings, { exact: true }),
  repositoryAccess: Schema.optionalWith(RepositoryAccess, { exact: true }),
  initialWorkspaceFiles: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { exact: true }),
  workspaceDefaultsId: Schema.optionalWith(Schema.String, { exact: true })
})
export const UpdateAgent = RequestBody({
  configurationId: ConfigurationId,
  executionMode: Schema.optionalWith(ExecutionMode, { exact: true }),
  backendId: Schema.optionalWith(BackendIdField, { exact: true }),
  harnessAuth: Schema.optionalWith(Schema.NullOr(HarnessAuth), { exact: true }),
  plugins: Schema.optionalWith(Plugins, { exact: true }),
  pluginApprovers: Schema.optionalWith(Schema.NullOr(PluginApprovers), { exact: true }),
  repositoryBindings: Schema.optionalWith(RepositoryBindings, { exact: true }),
  repositoryAccess: Schema.optionalWith(RepositoryAccess, { exact: true })
})
type Settings = { harnessAuth?: HarnessAuth | null; plugins?: Plugins; pluginApprovers?: typeof PluginApprovers.Type | null; repositoryBindings?: typeof RepositoryBindings.Type; repositoryAccess?: typeof RepositoryAccess.Type }
export const readSavedSettings = (stored: unknown): { settings: Partial<Settings>; unreadable: ReadonlyArray<"harnessAuth" | "plugins" | "pluginApprovers" | "repositoryBindings" | "repositoryAccess"> } => {
  const s = (stored ?? {}) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  const unreadable: Array<any> = []
  const fields = { harnessAuth: Schema.NullOr(HarnessAuth), plugins: Plugins, pluginApprovers: Schema.NullOr(PluginApprovers), repositoryBindings: RepositoryBindings, repositoryAccess: RepositoryAccess } as const
  for (const [k, schema] of Object.entries(fields)) {
    if (!(k in s)) continue
    const r = Schema.decodeUnknownEither(schema as any)(s[k])
    if (r._tag === "Right") out[k] = r.right; else unreadable.push(k)
  }
  return { settings: out as Partial<Settings>, unreadable }
}
