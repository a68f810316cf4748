/** Tenancy: the Namespace creation path shared by bootstrap and `POST /namespaces`. */
export {
  type CreatedNamespace,
  createNamespace,
  NAMESPACE_PROVISION,
  NAMESPACE_TEARDOWN,
  NamespaceNameTaken,
  type NewNamespace,
  WorkOutbox
} from "./namespaces.js"
export { AGENT_DEPLOY, AGENT_RECOVER, AGENT_STOP, AGENT_TEARDOWN, AgentDeployPayload, AgentWorkPayload } from "./agents.js"
