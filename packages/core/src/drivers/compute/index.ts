/** The Compute Driver (DESIGN §8): the interface and its implementations. */
export * from "./driver.js"
export * from "./harness.js"
export { layerFromConfiguration, supportsExistingNamespace } from "./select.js"
export { metered, meteredCompute } from "./metered.js"
export {
  type DeviceIdentity,
  deviceIdentityFromSecret,
  type GatewayEndpoint,
  GatewayRpcError,
  type GatewaySession,
  gatewaySession,
  makeDeviceIdentity,
  type RpcAnswer
} from "./gatewayRpc.js"
// The kubernetes driver's code that reaches its client is in `@svc/core/drivers/compute/kubernetes`
// (`kubernetes/index.ts`), so that importing this module does not load the client.
export type { KubernetesComputeOptions, KubernetesSettings } from "./kubernetes.js"
export {
  bearerKey,
  LISTENER_ANNOTATION,
  REPOSITORIES_COMPONENT,
  REPOSITORIES_DIR,
  REPOSITORIES_MODE,
  REPOSITORIES_VOLUME,
  repositoriesObjectName,
  repositoryMount,
  SESSIONS_ANNOTATION
} from "./kubernetes/repositoryObjects.js"
export type { Cluster } from "./kubernetes/client.js"
export { type EndpointResolver, type GatewayAddress, serviceDnsResolver } from "./kubernetes/endpoints.js"
export type { ServiceProxyResolver } from "./kubernetes/serviceProxy.js"
export { agentManifests, podEnvironment, renderPodGatewayConfig, TOKEN_VARIABLE } from "./kubernetes/agentObjects.js"
export { approvable, approvePending, type PairingConfig, pairingConfig, PairingVariables, runApprover, SERVICE_DEVICE_SCOPES } from "./pairing.js"
export { PAIRING_CONTAINER, PAIRING_UID, pairingContainer, type ServiceDevice } from "./kubernetes/pairingObjects.js"
export { agentObjectName, GATEWAY_PORT, kubernetesNamespace, LABELS } from "./kubernetes/names.js"
export { CONTROL_PLANE_LABEL, NAMESPACE_OBJECTS, PRIVATE_RANGES } from "./kubernetes/namespaceObjects.js"
export {
  layerLocal,
  layerLocalFromProcess,
  LocalComputeCodes,
  type LocalComputeOptions,
  makeLocalCompute,
  namespaceDirectory,
  namespacesRoot
} from "./local.js"
export {
  type Confinement,
  confinementCheck,
  describeConfinement,
  detectConfinement,
  launchCommand,
  usesGatewayUsers
} from "./local/confinement.js"
export { clampExecPolicy, renderGatewayConfig, serializeGatewayConfig } from "./local/gatewayConfig.js"
export { GatewayCodes, type LocalGatewayOptions } from "./local/gateways.js"
export { gatewayArgv } from "./local/gatewayProcess.js"
export {
  ensureGatewayUser,
  type GatewayUser,
  gatewayUserName,
  lookupGatewayUser,
  removeGatewayUser,
  removeOrphanGatewayUsers
} from "./local/gatewayUser.js"
export { agentLayout, type AgentLayout, makeTraversable, prepareAgentLayout } from "./local/layout.js"
export { classifyProbeAnswer, type ModelProbeResult, probeModel } from "./local/modelProbe.js"
export { groupAlive, groupCpuTicks } from "./local/processGroup.js"
export { awaitReady, probeHealth, type Readiness, type ReadinessBudget } from "./local/readiness.js"
export { assignPort, candidatePorts, defaultPortRange, isPortFree, type PortRange, recordedPort, releasePort } from "./local/ports.js"
export {
  defaultRuntimeRoot,
  locateRuntime,
  RUNTIME_NOT_INSTALLED,
  runtimePaths,
  RuntimeVersions,
  versionKey
} from "./local/runtime.js"
export { type InstallOutcome, installRuntime, RuntimeInstallError } from "./local/runtimeInstall.js"
