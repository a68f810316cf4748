import { Schema } from "effect"
import { AgentId, NamespaceId, RevisionId } from "../schema/ids.js"

/**
 * The work kinds of an Agent's lifecycle (SPEC 3), queued by the API in the transaction of the
 * state change and reconciled by the worker:
 * - `agent.deploy`, keyed by the revision id: start the revision's gateway, activate it, retire
 *   the previous one. Its work item is the revision's deployment status (SPEC 2.7).
 * - `agent.stop`, keyed by the Agent id: remove execution, clear `activeRevisionId`.
 * - `agent.teardown`, keyed by the Agent id: remove the workload, then the Agent, its revisions,
 *   its service principal, keys and bindings in one transaction.
 * - `agent.recover`, keyed by the Agent id: queued by the worker's recovery sweep (at start and
 *   periodically), never by the API. Re-adopts or restarts the active revision's gateway of an
 *   Agent desired `running`, and stops the gateway of an Agent desired `stopped` or gone. It
 *   never changes `activeRevisionId` nor any deployment's status.
 */
export const AGENT_DEPLOY = "agent.deploy"
export const AGENT_STOP = "agent.stop"
export const AGENT_TEARDOWN = "agent.teardown"
export const AGENT_RECOVER = "agent.recover"

export const AgentDeployPayload = Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId })
export const AgentWorkPayload = Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId })
