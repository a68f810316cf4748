/**
 * The `kubernetes` Compute Driver's entry (`@svc/core/drivers/compute/kubernetes`): everything
 * that reaches `@kubernetes/client-node`. It is apart from `@svc/core/drivers/compute` because
 * that client is about 800 modules and close to a second of start-up: a process on the `local`
 * driver never loads it, and `select.ts` imports this driver only when it is selected.
 */
export {
  type KubernetesComputeOptions,
  type KubernetesSettings,
  defaultResolver,
  layerKubernetes,
  makeKubernetesCompute,
  makeKubernetesComputeFor,
  REPOSITORY_LISTENER_MISSING
} from "../kubernetes.js"
export { type Cluster, KubernetesCodes, loadKubeConfig, makeCluster } from "./client.js"
export { apiServerProxyResolver, type ServiceProxyResolver, serviceProxyPath } from "./serviceProxy.js"
