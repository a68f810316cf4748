/** The `kubernetes` driver against the run's shared cluster, as the tests build it. */
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import type { KubernetesObject } from "@kubernetes/client-node"
import { Duration, Effect } from "effect"
import type { ClusterState } from "./cluster.js"

export const clusterOf = (state: ClusterState): Compute.Cluster =>
  Kubernetes.makeCluster(Kubernetes.loadKubeConfig({ kubeconfigPath: state.kubeconfig, context: "test" }))

/** The tests' service device: derived from a fixed key as production derives it from SVC_SECRET_KEY. */
export const testServiceDevice = Compute.deviceIdentityFromSecret(new Uint8Array(32).fill(7))

/**
 * What a cluster client's request carries: the Service's DNS name as Host, and `X-Forwarded-For`
 * with a Pod address. The pinned gateway takes a loopback connection for local (pairing it
 * silently) whatever its Host (a non-local Host only logs a warning); through the test node's
 * trusted loopback proxy (`behindLoopbackProxy` in testNode.ts) the forwarded address makes the
 * service remote, as it is in a cluster: its device must be approved by the Pod's `pairing` container.
 */
export const clusterClientHeaders = (address: Compute.GatewayAddress): Readonly<Record<string, string>> => ({
  host: `${address.service}.${address.namespace}.svc.cluster.local:${address.port}`,
  "x-forwarded-for": "192.0.2.200"
})

/** This test file's instance: its workers' orphan sweeps leave other files' gateways alone. */
const scope = `test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`

export const kubernetesDriver = (
  state: ClusterState,
  options: Compute.KubernetesComputeOptions = {},
  settings: Partial<Compute.KubernetesSettings> = {}
): Compute.ComputeDriverShape =>
  Kubernetes.makeKubernetesComputeFor(clusterOf(state), { ...settings, kubeconfigPath: state.kubeconfig, context: "test" }, {
    deletionWait: Duration.minutes(2),
    scope,
    device: testServiceDevice,
    rpcHeaders: clusterClientHeaders,
    ...options
  })

/** An object, or `undefined` when absent (test reads, failing loudly on API errors). */
export const readObject = <T = unknown>(
  cluster: Compute.Cluster,
  ref: { apiVersion: string; kind: string; name: string; namespace?: string }
): Promise<(KubernetesObject & T) | undefined> => Effect.runPromise(cluster.read<KubernetesObject & T>(ref))
