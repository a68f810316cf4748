/**
 * The fields of Agent create and update bodies (SPEC 2.4, 2.5, 2.9), and the saved settings an
 * Agent keeps of them. Every refinement names its `details[].code` in its message (see
 * `detailMessage`); every struct rejects unknown fields (UNKNOWN_FIELD), which is how the
 * fields SPEC 2.4 refuses (`servicePrincipalId`, an inline `configuration`, `gateway`,
 * `modelApiKey`, legacy `approvalMode` and category approvals) are refused.
 */
import {
  AgentFieldRules,
  ConfigurationId,
  detailMessage,
  JsonObject,
  KeyedRecord,
  Limits,
  OneOf,
  OpaqueToken,
  PluginId,
  RequestBody
} from "../../schema/index.js"
import { Either, ParseResult, Predicate, Schema } from "effect"
import { ResourceName } from "../iam/schemas.js"

// ---------------------------------------------------------------------------------------------
// Scalars

/** SPEC 2.4: 1-200 chars, no leading or trailing whitespace, no control characters. */
export const AgentName = ResourceName

export const ExecutionMode = AgentFieldRules.ExecutionMode
export type ExecutionMode = typeof ExecutionMode.Type

/** A Backend ID, or null for none (the rule and its reasons: `agentFieldRules`). */
export const BackendIdField = AgentFieldRules.BackendId

/** SPEC 2.4 / 2.5: a same-Namespace Secret, `{kind: secret, namespaceId, id}` (as bindings name one). */
export const SecretSource = AgentFieldRules.SecretSource

/** One of the five bindings of SPEC 2.5, told apart by `method` (SPEC 2.5). */
export const HarnessAuth = AgentFieldRules.HarnessAuth
export type HarnessAuth = typeof HarnessAuth.Type

// ---------------------------------------------------------------------------------------------
// Maps whose keys have rules

/** A struct of optional fields that must hold at least one (SPEC 2.9). */
const atLeastOneField = <S extends Schema.Schema<object, object>>(self: S) =>
  self.pipe(
    Schema.filter((value) => Object.keys(value).length > 0, {
      message: detailMessage("INVALID_VALUE", "must hold at least one field")
    })
  )

// ---------------------------------------------------------------------------------------------
// Plugins (SPEC 2.9) and approvers (SPEC 2.4)


/** The former values `native`, `prompt` and `approve` are not among them (INVALID_VALUE). */
export const ApprovalMode = OneOf("provider_default", "all_actions", "write_actions", "none")
export type ApprovalMode = typeof ApprovalMode.Type

export const Reviewer = OneOf("human", "auto")
export type Reviewer = typeof Reviewer.Type

export const ChannelApprover = AgentFieldRules.ChannelApprover
export type ChannelApprover = typeof ChannelApprover.Type

export const PluginApprovers = AgentFieldRules.PluginApprovers

/** PATCH: omission preserves, `null` restores legacy routing, `[]` denies chat approval. */
export const NullablePluginApprovers = Schema.NullOr(PluginApprovers)

const ToolId = OpaqueToken(Limits.toolId.min, Limits.toolId.max)

const ToolDefaults = RequestBody({
  enabled: Schema.optionalWith(Schema.Boolean, { exact: true }),
  approval: Schema.optionalWith(ApprovalMode, { exact: true }),
  reviewer: Schema.optionalWith(Reviewer, { exact: true })
}).pipe(atLeastOneField)

const ToolOverride = RequestBody({
  enabled: Schema.optionalWith(Schema.Boolean, { exact: true }),
  approval: Schema.optionalWith(ApprovalMode, { exact: true }),
  reviewer: Schema.optionalWith(Reviewer, { exact: true }),
  approvers: Schema.optionalWith(PluginApprovers, { exact: true })
}).pipe(atLeastOneField)

const PluginSelection = RequestBody({
  enabled: Schema.Boolean,
  toolDefaults: Schema.optionalWith(ToolDefaults, { exact: true }),
  approvers: Schema.optionalWith(PluginApprovers, { exact: true }),
  tools: Schema.optionalWith(KeyedRecord(ToolId, ToolOverride), { exact: true }),
  driverPolicy: Schema.optionalWith(JsonObject, { exact: true })
})

/** Plugin ID to its desired state. `null` is not a map (INVALID_TYPE). */
export const Plugins = KeyedRecord(PluginId, PluginSelection).annotations({
  identifier: "AgentPlugins",
  description: "Driver-qualified plugin ID to its desired state"
})
export type Plugins = typeof Plugins.Type

// ---------------------------------------------------------------------------------------------
// Repositories (SPEC 2.4)

export const RepositoryRef = AgentFieldRules.RepositoryRef
export const RepositoryProfile = AgentFieldRules.RepositoryProfile

export const RepositoryBindings = AgentFieldRules.RepositoryList.annotations({ identifier: "RepositoryBindings" })
export type RepositoryBindings = typeof RepositoryBindings.Type

export const RepositoryAccess = AgentFieldRules.RepositoryAccess
export type RepositoryAccess = typeof RepositoryAccess.Type

// ---------------------------------------------------------------------------------------------
// Create-only fields (SPEC 2.4)

export const InitialWorkspaceFiles = AgentFieldRules.InitialWorkspaceFiles
export type InitialWorkspaceFiles = typeof InitialWorkspaceFiles.Type

/** The SHA-256 identity of the workspace defaults the caller saw. */
export const WorkspaceDefaultsId = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{64}$/, { message: detailMessage("INVALID_FORMAT", "must be 64 lowercase hex characters") })
)

// ---------------------------------------------------------------------------------------------
// Request bodies (SPEC 4.4)

/** `repositoryBindings` and `repositoryAccess` exclude each other (INVALID_VALUE at the latter). */
export const oneRepositoryForm = (body: object) =>
  "repositoryBindings" in body && "repositoryAccess" in body
    ? {
      path: ["repositoryAccess"],
      message: detailMessage("INVALID_VALUE", "repositoryAccess and repositoryBindings exclude each other")()
    }
    : true

/** The draft fields create and update share. `.from.fields` of each body lists all of its fields. */
const draftFields = {
  configurationId: ConfigurationId,
  executionMode: Schema.optionalWith(ExecutionMode, { exact: true }),
  backendId: Schema.optionalWith(BackendIdField, { exact: true }),
  harnessAuth: Schema.optionalWith(Schema.NullOr(HarnessAuth), { exact: true }),
  plugins: Schema.optionalWith(Plugins, { exact: true }),
  repositoryBindings: Schema.optionalWith(RepositoryBindings, { exact: true }),
  repositoryAccess: Schema.optionalWith(RepositoryAccess, { exact: true })
}

export const CreateAgent = RequestBody({
  name: AgentName,
  ...draftFields,
  pluginApprovers: Schema.optionalWith(PluginApprovers, { exact: true }),
  initialWorkspaceFiles: Schema.optionalWith(InitialWorkspaceFiles, { exact: true }),
  workspaceDefaultsId: Schema.optionalWith(WorkspaceDefaultsId, { exact: true })
}).pipe(Schema.filter((body) => oneRepositoryForm(body))).annotations({ identifier: "CreateAgentRequest" })
export type CreateAgent = typeof CreateAgent.Type

export const UpdateAgent = RequestBody({
  ...draftFields,
  pluginApprovers: Schema.optionalWith(NullablePluginApprovers, { exact: true })
}).pipe(Schema.filter((body) => oneRepositoryForm(body))).annotations({ identifier: "UpdateAgentRequest" })
export type UpdateAgent = typeof UpdateAgent.Type

// ---------------------------------------------------------------------------------------------
// Saved settings (SPEC 2.4 `configurationReadError`)

type SavedSettingName = "harnessAuth" | "plugins" | "pluginApprovers" | "repositoryBindings" | "repositoryAccess"

const savedFieldDecoders: {
  readonly [K in SavedSettingName]: (stored: unknown) => Either.Either<Exclude<SavedSettings[K], undefined>, ParseResult.ParseError>
} = {
  harnessAuth: Schema.decodeUnknownEither(Schema.NullOr(HarnessAuth)),
  plugins: Schema.decodeUnknownEither(Plugins),
  pluginApprovers: Schema.decodeUnknownEither(NullablePluginApprovers),
  repositoryBindings: Schema.decodeUnknownEither(RepositoryBindings),
  repositoryAccess: Schema.decodeUnknownEither(RepositoryAccess)
}

/** The settings an Agent saves beside its Configuration reference; `harnessAuth` is always written. */
export const SavedSettings = Schema.Struct({
  harnessAuth: Schema.NullOr(HarnessAuth),
  plugins: Schema.optionalWith(Plugins, { exact: true }),
  pluginApprovers: Schema.optionalWith(NullablePluginApprovers, { exact: true }),
  repositoryBindings: Schema.optionalWith(RepositoryBindings, { exact: true }),
  repositoryAccess: Schema.optionalWith(RepositoryAccess, { exact: true })
}).annotations({ identifier: "AgentSavedSettings" })
export type SavedSettings = typeof SavedSettings.Type

const savedSettingNames = Object.keys(savedFieldDecoders) as ReadonlyArray<SavedSettingName>

/**
 * Reads stored settings field by field: a field that no longer decodes is left out (no default)
 * and named in `unreadable`, in field order, so a read can report `configurationReadError` for it
 * and still return everything else. A missing `harnessAuth` (always written, null for none) or a
 * stored value that is not an object is unreadable too.
 */
export const readSavedSettings = (stored: unknown): {
  readonly settings: Partial<SavedSettings>
  readonly unreadable: ReadonlyArray<SavedSettingName>
} => {
  if (!Predicate.isRecord(stored)) return { settings: {}, unreadable: savedSettingNames }
  const settings: { -readonly [K in SavedSettingName]?: SavedSettings[K] } = {}
  const unreadable: Array<SavedSettingName> = []
  const read = <K extends SavedSettingName>(name: K) => {
    if (!Object.hasOwn(stored, name)) {
      if (name === "harnessAuth") unreadable.push(name)
      return
    }
    const decoded = savedFieldDecoders[name](stored[name])
    if (Either.isRight(decoded)) settings[name] = decoded.right
    else unreadable.push(name)
  }
  savedSettingNames.forEach(read)
  return { settings, unreadable }
}
