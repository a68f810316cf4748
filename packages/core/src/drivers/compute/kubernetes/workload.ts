/**
 * Reading an Agent's workload back from the cluster: which namespace a Namespace lives in, the
 * Agent's Deployment and Pods, and whether they run a given revision and are ready. Pure reads;
 * `gateways.ts` decides what to do with them.
 */
import type { KubernetesObject, V1Deployment, V1Pod, V1Secret } from "@kubernetes/client-node"
import { Effect } from "effect"
import type { GatewayRef } from "../driver.js"
import { type Cluster, failure, KubernetesCodes } from "./client.js"
import { agentObjectName, LABELS, MANAGED_BY } from "./names.js"

export const objectRef = (kind: "Deployment" | "Service" | "Secret" | "ConfigMap" | "PersistentVolumeClaim", namespace: string, name: string) => ({
  apiVersion: kind === "Deployment" ? "apps/v1" : "v1",
  kind,
  namespace,
  name
})

/** The Kubernetes namespace labelled with this Namespace's id (ours or the bound one). */
export const findNamespace = (cluster: Cluster, namespaceId: string) =>
  cluster.list<KubernetesObject>("v1", "Namespace", { labelSelector: `${LABELS.namespaceId}=${namespaceId}` }).pipe(
    Effect.map((items) => items.find((item) => item.metadata?.deletionTimestamp === undefined)?.metadata?.name)
  )

export const requireNamespace = (cluster: Cluster, namespaceId: string) =>
  findNamespace(cluster, namespaceId).pipe(
    Effect.flatMap((name) =>
      name === undefined
        ? Effect.fail(failure(KubernetesCodes.NAMESPACE_RUNTIME_MISSING, "The Namespace's Kubernetes namespace is not provisioned yet.", false))
        : Effect.succeed(name)
    )
  )

export interface AgentWorkload {
  readonly namespace: string
  readonly name: string
  readonly deployment: V1Deployment | undefined
}

export const readWorkload = (cluster: Cluster, ref: Pick<GatewayRef, "namespaceId" | "agentId">) =>
  Effect.gen(function* () {
    const namespace = yield* findNamespace(cluster, ref.namespaceId)
    const name = agentObjectName(ref.agentId)
    if (namespace === undefined) return undefined
    const deployment = yield* cluster.read<V1Deployment>(objectRef("Deployment", namespace, name))
    return { namespace, name, deployment } satisfies AgentWorkload
  })

export const runsRevision = (deployment: V1Deployment | undefined, revisionId: string): deployment is V1Deployment =>
  deployment?.metadata?.labels?.[LABELS.revisionId] === revisionId

export const agentPods = (cluster: Cluster, namespace: string, agentId: string) =>
  cluster.list<V1Pod>("v1", "Pod", { namespace, labelSelector: `${LABELS.managedBy}=${MANAGED_BY},${LABELS.agentId}=${agentId}` })

const podReady = (pod: V1Pod) => pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true

/**
 * Available means what a rollout promises: the Deployment has seen its latest spec, has one
 * available replica, and every Pod of the Agent runs this revision and is Ready (with `Recreate`
 * an old Pod is gone before the new one starts).
 */
export const isAvailable = (deployment: V1Deployment, pods: ReadonlyArray<V1Pod>, revisionId: string): boolean => {
  const status = deployment.status ?? {}
  const seen = (status.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 1)
  const live = pods.filter((pod) => pod.metadata?.deletionTimestamp === undefined)
  return seen &&
    (status.availableReplicas ?? 0) >= 1 &&
    (status.updatedReplicas ?? 0) >= 1 &&
    live.length === 1 &&
    live.every((pod) => pod.metadata?.labels?.[LABELS.revisionId] === revisionId && podReady(pod))
}

/** The gateway token of the revision the Secret holds, if it holds this one. */
export const tokenFor = (secret: V1Secret | undefined, revisionId: string, variable: string): string | undefined => {
  if (secret?.metadata?.labels?.[LABELS.revisionId] !== revisionId) return undefined
  const encoded = secret.data?.[variable]
  return encoded === undefined ? undefined : Buffer.from(encoded, "base64").toString("utf8")
}
