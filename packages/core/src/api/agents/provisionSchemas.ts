/**
 * Agent provisioning bodies (SPEC 2.13, 4.4; DESIGN §7): the request, with either an inline
 * `configuration` or a Preset and its variables, and the work item every route answers with.
 * The launch fields are those of Agent create (`CreateAgent`), checked by the same schemas.
 */
import {
  AgentId,
  ConfigurationId,
  detailMessage,
  JsonObject,
  NamespaceId,
  PresetId,
  RequestBody,
  RequestId,
  Timestamp,
  WorkId
} from "../../schema/index.js"
import { ProvisioningPhases } from "../../tenancy/agents.js"
import { Schema } from "effect"
import { CreateConfiguration } from "../configurations/schemas.js"
import { CreateAgent, oneRepositoryForm } from "./fields.js"
import { WorkAttempt, WorkState } from "./schemas.js"

const { configurationId: _configurationId, ...launchFields } = CreateAgent.from.fields

const issue = (path: string, code: Parameters<typeof detailMessage>[0], text: string) => ({
  path: [path],
  message: detailMessage(code, text)()
})

/** Exactly one of `configuration` and `presetId`; `variables` only beside `presetId`. */
const oneSource = (body: { readonly configuration?: unknown; readonly presetId?: unknown; readonly variables?: unknown }) => {
  const issues = []
  if (body.configuration !== undefined && body.presetId !== undefined) {
    issues.push(issue("presetId", "INVALID_VALUE", "configuration and presetId exclude each other"))
  }
  if (body.configuration === undefined && body.presetId === undefined) {
    issues.push(issue("configuration", "REQUIRED", "configuration or presetId is required"))
  }
  if (body.variables !== undefined && body.presetId === undefined) {
    issues.push(issue("variables", "INVALID_VALUE", "variables apply only with presetId"))
  }
  const repository = oneRepositoryForm(body)
  if (repository !== true) issues.push(repository)
  return issues
}

export const ProvisionAgent = RequestBody({
  requestId: RequestId,
  ...launchFields,
  configuration: Schema.optionalWith(CreateConfiguration, { exact: true }),
  presetId: Schema.optionalWith(PresetId, { exact: true }),
  variables: Schema.optionalWith(JsonObject, { exact: true })
}).pipe(Schema.filter(oneSource)).annotations({
  identifier: "ProvisionAgentRequest",
  description: "An Agent and its Configuration, from an inline configuration or a Preset (presetId + variables)"
})
export type ProvisionAgent = typeof ProvisionAgent.Type

export const ProvisioningWork = Schema.Struct({
  /** The work id (`wrk_<uuidv4>`), also as `workId` (SPEC 2.13). */
  id: WorkId,
  workId: WorkId,
  requestId: RequestId,
  namespaceId: NamespaceId,
  status: WorkState,
  phase: Schema.Literal(...ProvisioningPhases),
  agentId: Schema.optionalWith(AgentId, { exact: true }),
  configurationId: Schema.optionalWith(ConfigurationId, { exact: true }),
  attemptCount: Schema.Number,
  lastAttempt: Schema.NullOr(WorkAttempt),
  nextAttemptAt: Schema.NullOr(Timestamp),
  /** SPEC 2.13 `error?`: present only when the work failed. */
  error: Schema.optionalWith(Schema.Struct({ code: Schema.String, message: Schema.String }), { exact: true }),
  /** Where to poll: this item's path under the API's base URL. */
  url: Schema.String,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "AgentProvisioning" })
export type ProvisioningWork = typeof ProvisioningWork.Type

export const ProvisioningAdmitted = Schema.Struct({ provisioning: ProvisioningWork }).annotations({ identifier: "AgentProvisioningAdmitted" })
