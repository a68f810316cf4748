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
export {
  AGENT_DEPLOY,
  AGENT_PROVISION,
  AGENT_RECOVER,
  AGENT_STOP,
  AGENT_TEARDOWN,
  AgentDeployPayload,
  AgentProvisionPayload,
  AgentProvisionRequest,
  AgentWorkPayload,
  deliveredSecrets,
  HARNESS_TOKEN_VARIABLE,
  MODEL_API_KEY_VARIABLE,
  type Recipient,
  type ProvisioningPhase,
  ProvisioningPhases
} from "./agents.js"
export {
  boundSecretIds,
  insertAgent,
  insertConfiguration,
  type NewAgent,
  type NewConfiguration,
  pinAgentSecrets,
  type RecordContext,
  writeConfigurationSecretRefs
} from "./records.js"
