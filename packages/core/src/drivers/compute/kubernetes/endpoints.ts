/**
 * How the service reaches a gateway (DESIGN §14): one resolver for probes, diagnostics and the
 * native admin proxy. In the cluster that is the Service's DNS name. Tests plug in their own
 * (the loopback port where the test node runs the Pod's process), because the API server refuses
 * to proxy to loopback addresses (../shared/k8s/README.md).
 */
import { Effect } from "effect"
import type { ComputeFailure } from "../driver.js"

export interface GatewayAddress {
  /** The Kubernetes namespace. */
  readonly namespace: string
  /** The gateway's Service. */
  readonly service: string
  readonly port: number
}

/** The base URL (`http://host:port`, no trailing slash) at which a gateway's Service answers. */
export type EndpointResolver = (address: GatewayAddress) => Effect.Effect<string, ComputeFailure>

export const serviceDnsResolver = (clusterDomain = "cluster.local"): EndpointResolver => (address) =>
  Effect.succeed(`http://${address.service}.${address.namespace}.svc.${clusterDomain}:${address.port}`)
