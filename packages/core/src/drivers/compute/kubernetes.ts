/**
 * The `kubernetes` Compute Driver (DESIGN §14): each Namespace gets a Kubernetes namespace
 * (`kubernetes/namespaces.ts`), each Agent one gateway Deployment with its Service, Secret,
 * ConfigMap and volume (`kubernetes/gateways.ts`). Credentials come from the kubeconfig the
 * Installation configuration names, or the Pod's service account in the cluster. The service
 * reaches gateways through an endpoint resolver (`kubernetes/endpoints.ts`).
 */
import { Effect, Layer } from "effect"
import type { KubernetesCompute } from "../../config/index.js"
import { ComputeDriver, type ComputeDriverShape } from "./driver.js"
import { makeDeviceIdentity } from "./gatewayRpc.js"
import { type Cluster, loadKubeConfig, makeCluster } from "./kubernetes/client.js"
import { type EndpointResolver, serviceDnsResolver } from "./kubernetes/endpoints.js"
import { apiServerProxyResolver } from "./kubernetes/serviceProxy.js"
import { type GatewayOptions, makeKubernetesGateways } from "./kubernetes/gateways.js"
import { makeKubernetesNamespaces, type NamespaceOptions } from "./kubernetes/namespaces.js"
import { makeKubernetesRepositoryClients } from "./kubernetes/repositoryClients.js"

export type KubernetesSettings = Omit<typeof KubernetesCompute.Type, "id">

export interface KubernetesComputeOptions extends NamespaceOptions, Partial<Omit<GatewayOptions, "resolver">> {
  /** How gateways are reached; default: as `settings.endpoints` selects (`defaultResolver`). */
  readonly resolver?: EndpointResolver | undefined
  /**
   * Labels this instance's gateways so `liveGateways` (the orphan sweep) sees only them, when
   * several services share one cluster (the test files sharing one API server do).
   */
  readonly scope?: string | undefined
}

/**
 * `settings.endpoints`, or by where the credentials come from: a kubeconfig means the service runs
 * outside the cluster (the API server's Service proxy), in-cluster credentials inside (Service DNS).
 */
export const defaultResolver = (cluster: Cluster, settings: KubernetesSettings): EndpointResolver =>
  (settings.endpoints ?? (settings.kubeconfigPath === undefined ? "serviceDns" : "apiServerProxy")) === "serviceDns"
    ? serviceDnsResolver(settings.clusterDomain)
    : apiServerProxyResolver(cluster).resolve

/** Why a revision with repository grants cannot be deployed without `repositoryListenerUrl`. */
export const REPOSITORY_LISTENER_MISSING =
  "The kubernetes Compute Driver needs drivers.compute.repositoryListenerUrl (the credential service's client listener as the Agents' Pods reach it) to deliver repository client material."

export const makeKubernetesComputeFor = (
  cluster: Cluster,
  settings: KubernetesSettings,
  options: KubernetesComputeOptions = {}
): ComputeDriverShape => {
  const scope = options.scope ?? settings.scope
  return {
    id: "kubernetes",
    supportsExistingNamespace: true,
    ...makeKubernetesNamespaces(cluster, options),
    ...makeKubernetesGateways(cluster, {
      ...options,
      settings: { ...settings, scope },
      resolver: options.resolver ?? defaultResolver(cluster, settings),
      // Without the service's key (development without SVC_SECRET_KEY): a key of this process only.
      device: options.device ?? makeDeviceIdentity()
    }),
    ...(settings.repositoryListenerUrl === undefined
      ? { repositoryClientsUnavailable: REPOSITORY_LISTENER_MISSING }
      : { repositoryClients: makeKubernetesRepositoryClients(cluster, { listenerUrl: settings.repositoryListenerUrl, scope }) })
  }
}

export const makeKubernetesCompute = (settings: KubernetesSettings, options: KubernetesComputeOptions = {}): ComputeDriverShape =>
  makeKubernetesComputeFor(makeCluster(loadKubeConfig(settings)), settings, options)

/** The driver over the Installation's settings; an unreadable kubeconfig stops the process at start. */
export const layerKubernetes = (
  settings: KubernetesSettings,
  options: KubernetesComputeOptions = {}
): Layer.Layer<ComputeDriver> =>
  Layer.effect(
    ComputeDriver,
    Effect.try(() => makeKubernetesCompute(settings, options)).pipe(
      Effect.tap(() =>
        Effect.logInfo("kubernetes compute: selected", {
          kubeconfig: settings.kubeconfigPath ?? "in-cluster",
          context: settings.context
        })
      ),
      Effect.orDieWith((cause) => new Error(`the kubernetes Compute Driver cannot load its cluster credentials: ${String(cause)}`))
    )
  )
