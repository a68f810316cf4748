/**
 * The tests' endpoint resolver (../shared/k8s/README.md: the API server refuses to proxy to
 * loopback addresses): a gateway Service resolves to the loopback port where the test node runs
 * the Pod its selector picks. The node process uses its own list; a worker in another process
 * (the crash test's) reads the list the node writes to a file after every pass.
 */
import * as fs from "node:fs"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { Effect } from "effect"

/** A Pod's gateway process on the test node. */
export interface PodEndpoint {
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
  readonly port: number
}

const unreachable = new Compute.ComputeFailure({
  code: Kubernetes.KubernetesCodes.GATEWAY_UNREACHABLE,
  message: "The gateway's Service has no running Pod.",
  permanent: false
})

export const loopbackResolver = (
  cluster: Compute.Cluster,
  pods: () => Promise<ReadonlyArray<PodEndpoint>>
): Compute.EndpointResolver => (address) =>
  Effect.tryPromise(async () => {
    const service = (await Effect.runPromise(
      cluster.send({ method: "GET", path: `/api/v1/namespaces/${address.namespace}/services/${address.service}` })
    )) as { spec: { selector: Record<string, string> } }
    const pod = (await pods()).find((candidate) =>
      candidate.namespace === address.namespace &&
      Object.entries(service.spec.selector).every(([key, value]) => candidate.labels[key] === value)
    )
    if (pod === undefined) throw new Error("no running Pod behind the Service")
    return `http://127.0.0.1:${pod.port}`
  }).pipe(Effect.mapError(() => unreachable))

/** Replaces the file atomically (a reader never sees half a list). */
export const writePodEndpoints = (file: string, pods: ReadonlyArray<PodEndpoint>): void => {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(pods))
  fs.renameSync(`${file}.tmp`, file)
}

export const readPodEndpoints = async (file: string): Promise<ReadonlyArray<PodEndpoint>> =>
  fs.promises.readFile(file, "utf8").then((text) => JSON.parse(text) as ReadonlyArray<PodEndpoint>, () => [])

export const fileResolver = (cluster: Compute.Cluster, file: string): Compute.EndpointResolver =>
  loopbackResolver(cluster, () => readPodEndpoints(file))
