import { Schema } from "effect"
import { AgentId, NamespaceId, RevisionId, WorkId } from "../schema/ids.js"

/**
 * The work kinds of an Agent's lifecycle (SPEC 3), queued by the API in the transaction of the
 * state change and reconciled by the worker:
 * - `agent.deploy`, keyed by the revision id: start the revision's gateway, activate it, retire
 *   the previous one. Its work item is the revision's deployment status (SPEC 2.7).
 * - `agent.stop`, keyed by the Agent id: remove execution, clear `activeRevisionId`.
 * - `agent.teardown`, keyed by the Agent id: remove the workload, then the Agent, its revisions,
 *   its service principal, keys and bindings in one transaction.
 * - `agent.provision`, keyed by the provisioning record's id (`wrk_...`, SPEC 2.13): create the
 *   Configuration, then the Agent with its principal, then hand off (docs/decisions/agent-provisioning.md).
 * - `agent.recover`, keyed by the Agent id: queued by the worker's recovery sweep (at start and
 *   periodically), never by the API. Re-adopts or restarts the active revision's gateway of an
 *   Agent desired `running`, and stops the gateway of an Agent desired `stopped` or gone. It
 *   never changes `activeRevisionId` nor any deployment's status.
 */
export const AGENT_DEPLOY = "agent.deploy"
export const AGENT_STOP = "agent.stop"
export const AGENT_TEARDOWN = "agent.teardown"
export const AGENT_PROVISION = "agent.provision"
export const AGENT_RECOVER = "agent.recover"

export const AgentDeployPayload = Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId })
export const AgentWorkPayload = Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId })
export const AgentProvisionPayload = Schema.Struct({ namespaceId: NamespaceId, workId: WorkId })

/** The phases of a provisioning record (SPEC 2.13, 3), in order. */
export const ProvisioningPhases = ["admitted", "configuration", "transport", "handoff"] as const
export type ProvisioningPhase = (typeof ProvisioningPhases)[number]

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * What an admitted provisioning request keeps for the worker (`agent_provisioning.request`):
 * the Configuration to create and the Agent row to write, resolved at admission (a Preset
 * already rendered). Secret references only, never a Secret value.
 */
export const AgentProvisionRequest = Schema.Struct({
  configuration: Schema.Struct({
    values: Json,
    secretBindings: Schema.Record({
      key: Schema.String,
      value: Schema.Struct({
        source: Schema.Struct({ kind: Schema.Literal("secret"), namespaceId: Schema.String, id: Schema.String }),
        delivery: Schema.optionalWith(Schema.Struct({ type: Schema.Literal("env") }), { exact: true })
      })
    })
  }),
  agent: Schema.Struct({
    name: Schema.String,
    executionMode: Schema.Literal("embedded", "dedicated"),
    backendId: Schema.NullOr(Schema.String),
    settings: Json,
    workspaceDefaultsId: Schema.NullOr(Schema.String),
    initialWorkspaceFiles: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
    harnessSecretId: Schema.NullOr(Schema.String)
  })
})
export type AgentProvisionRequest = typeof AgentProvisionRequest.Type

/** The environment variable that carries an `api_key` harness Secret (reserved for it, SPEC 2.8). */
export const MODEL_API_KEY_VARIABLE = "MODEL_API_KEY"

/** The harness container's credential variable (`HarnessVariables.token` of the Compute Driver). */
export const HARNESS_TOKEN_VARIABLE = "SVC_HARNESS_TOKEN"

/** Where a delivered Secret goes: the gateway's environment, or the harness container's only. */
export type Recipient = "gateway" | "harness"

/**
 * What a revision delivers: each Configuration binding to the gateway under its name, an
 * `api_key` harness Secret to the gateway as `MODEL_API_KEY`, and a `direct_token` Secret to the
 * harness only (`SVC_HARNESS_TOKEN`; the gateway never receives it, SPEC 2.5). One rule for
 * both sides: the API authorizes exactly these Secrets at deploy time and the worker reveals
 * exactly these at start.
 */
export const deliveredSecrets = (
  secretBindings: Readonly<Record<string, { readonly source: { readonly id: string } }>>,
  harnessAuth: { readonly method: string; readonly source?: { readonly id: string } } | null | undefined
): ReadonlyArray<{ readonly destination: string; readonly secretId: string; readonly to: Recipient }> => [
  ...Object.entries(secretBindings).map(([destination, binding]) => ({ destination, secretId: binding.source.id, to: "gateway" as const })),
  ...(harnessAuth?.method === "api_key" && harnessAuth.source !== undefined
    ? [{ destination: MODEL_API_KEY_VARIABLE, secretId: harnessAuth.source.id, to: "gateway" as const }]
    : []),
  ...(harnessAuth?.method === "direct_token" && harnessAuth.source !== undefined
    ? [{ destination: HARNESS_TOKEN_VARIABLE, secretId: harnessAuth.source.id, to: "harness" as const }]
    : [])
]
