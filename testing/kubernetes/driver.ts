/** The `kubernetes` driver against the run's shared cluster, as the tests build it. */
import * as Compute from "@svc/core/drivers/compute"
import type { KubernetesObject } from "@kubernetes/client-node"
import { Duration, Effect } from "effect"
import type { ClusterState } from "./cluster.js"

export const clusterOf = (state: ClusterState): Compute.Cluster =>
  Compute.makeCluster(Compute.loadKubeConfig({ kubeconfigPath: state.kubeconfig, context: "test" }))

/** The tests' service device: derived from a fixed key as production derives it from SVC_SECRET_KEY. */
export const testServiceDevice = Compute.deviceIdentityFromSecret(new Uint8Array(32).fill(7))

/**
 * The Host header a cluster client would send (the Service's DNS name): over the test node's
 * loopback ports the gateway then treats the service as remote, as it is in a cluster, so the
 * device must be approved by the Pod's `pairing` container.
 */
export const serviceDnsHost = (address: Compute.GatewayAddress) => `${address.service}.${address.namespace}.svc.cluster.local:${address.port}`

/** This test file's instance: its workers' orphan sweeps leave other files' gateways alone. */
const scope = `test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`

export const kubernetesDriver = (
  state: ClusterState,
  options: Compute.KubernetesComputeOptions = {}
): Compute.ComputeDriverShape =>
  Compute.makeKubernetesComputeFor(clusterOf(state), { kubeconfigPath: state.kubeconfig, context: "test" }, {
    deletionWait: Duration.minutes(2),
    scope,
    device: testServiceDevice,
    rpcHost: serviceDnsHost,
    ...options
  })

/** An object, or `undefined` when absent (test reads, failing loudly on API errors). */
export const readObject = <T = unknown>(
  cluster: Compute.Cluster,
  ref: { apiVersion: string; kind: string; name: string; namespace?: string }
): Promise<(KubernetesObject & T) | undefined> => Effect.runPromise(cluster.read<KubernetesObject & T>(ref))
