/**
 * `RepositoryClients` of the `kubernetes` driver: each revision's material is its own Secret
 * (`repositoryObjects.ts`), written by server-side apply with every repository's bearer (the
 * caller holds the Agent's gateway lock), read back for `sessions`, `environment` and
 * `revisions`, deleted by `remove`. The gateway finds it through the mount `startGateway` adds
 * when the revision's Secret exists. The listener written into `gitconfig` is the
 * `repositoryListenerUrl` setting (the credential service's client listener as Pods reach it),
 * not the address the service itself uses; the Namespace's NetworkPolicy `svc-repository-egress`
 * admits it.
 */
import type { KubernetesObject, V1Secret } from "@kubernetes/client-node"
import { Effect, Redacted } from "effect"
import type { GatewayRef, RepositoryClients } from "../driver.js"
import { REPOSITORY } from "../local/repositoryClients.js"
import { type Cluster, failure, KubernetesCodes } from "./client.js"
import { LABELS } from "./names.js"
import {
  readMaterial,
  repositoriesObjectName,
  repositoriesSecret,
  repositoriesSelector,
  repositoryEgressPolicy,
  repositoryMount,
  repositoryVariables
} from "./repositoryObjects.js"
import { findNamespace, objectRef, requireNamespace } from "./workload.js"
import { withExportedSpan } from "../../../observability/spans.js"

/** An id that is a valid label value (what `revisionLabels` stores). */
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/

const refused = (message: string) => Effect.fail(failure(KubernetesCodes.GATEWAY_SPEC_INVALID, message, true))

const checkRef = (ref: Pick<GatewayRef, "namespaceId" | "agentId"> & { readonly revisionId?: string }) =>
  [ref.namespaceId, ref.agentId, ...(ref.revisionId === undefined ? [] : [ref.revisionId])].every((id) => LABEL_VALUE.test(id))
    ? Effect.void
    : refused("The Agent or revision id cannot label a Kubernetes object.")

const secretRef = (namespace: string, ref: GatewayRef) => objectRef("Secret", namespace, repositoriesObjectName(ref))

/** The revision's material in `namespace`, or `undefined` (no Secret, or no session in it). */
const readIn = (cluster: Cluster, namespace: string, ref: GatewayRef) =>
  Effect.map(cluster.read<V1Secret>(secretRef(namespace, ref)), (secret) => {
    const material = readMaterial(secret, ref)
    return material === undefined || Object.keys(material.sessions).length === 0 ? undefined : material
  })

/** The revision's material as the cluster holds it, or `undefined` (no namespace, no Secret). */
const readRepositoryMaterial = (cluster: Cluster, ref: GatewayRef) =>
  Effect.gen(function* () {
    yield* checkRef(ref)
    const namespace = yield* findNamespace(cluster, ref.namespaceId)
    return namespace === undefined ? undefined : yield* readIn(cluster, namespace, ref)
  })

/** The mount a gateway starting in `namespace` gets for its revision's material; none without material. */
export const repositoryMountFor = (cluster: Cluster, namespace: string, ref: GatewayRef) =>
  Effect.map(readIn(cluster, namespace, ref), (material) =>
    material === undefined ? undefined : repositoryMount(repositoriesObjectName(ref), material.listenerHost))

/** Removes every repository Secret of the Agent in `namespace` (the Agent's deletion). */
export const removeAgentMaterial = (cluster: Cluster, namespace: string, agentId: string) =>
  Effect.gen(function* () {
    const secrets = yield* cluster.list<KubernetesObject>("v1", "Secret", { namespace, labelSelector: repositoriesSelector(agentId) })
    for (const secret of secrets) {
      const name = secret.metadata?.name
      if (name !== undefined) yield* cluster.remove(objectRef("Secret", namespace, name))
    }
  })

export const makeKubernetesRepositoryClients = (
  cluster: Cluster,
  options: { readonly listenerUrl: string; readonly scope?: string | undefined }
): RepositoryClients => {
  const listener = new URL(options.listenerUrl)

  const write: RepositoryClients["write"] = (ref, client) =>
    Effect.gen(function* () {
      yield* checkRef(ref)
      if (!REPOSITORY.test(client.repository)) return yield* refused("The repository name cannot name client material.")
      const namespace = yield* requireNamespace(cluster, ref.namespaceId)
      const current = readMaterial(yield* cluster.read<V1Secret>(secretRef(namespace, ref)), ref)
      const secret = repositoriesSecret(ref, namespace, {
        sessions: { ...current?.sessions, [client.repository]: client.sessionId },
        bearers: { ...current?.bearers, [client.repository]: Redacted.value(client.bearer) },
        listener
      }, options.scope)
      yield* cluster.apply(repositoryEgressPolicy(namespace, ref.namespaceId, listener))
      yield* cluster.apply(secret)
    }).pipe(withExportedSpan("KubernetesCompute.writeRepositoryClient", { attributes: { agentId: ref.agentId, sessionId: client.sessionId } }))

  const sessions: RepositoryClients["sessions"] = (ref) =>
    Effect.map(readRepositoryMaterial(cluster, ref), (material) => Object.values(material?.sessions ?? {}))

  const environment: RepositoryClients["environment"] = (ref) =>
    Effect.map(readRepositoryMaterial(cluster, ref), (material): Readonly<Record<string, string>> =>
      material === undefined ? {} : repositoryVariables(material.listenerHost))

  const revisions: RepositoryClients["revisions"] = (ref) =>
    Effect.gen(function* () {
      yield* checkRef(ref)
      const namespace = yield* findNamespace(cluster, ref.namespaceId)
      if (namespace === undefined) return []
      const secrets = yield* cluster.list<KubernetesObject>("v1", "Secret", { namespace, labelSelector: repositoriesSelector(ref.agentId) })
      return secrets.flatMap((secret) => {
        const revisionId = secret.metadata?.labels?.[LABELS.revisionId]
        return revisionId === undefined ? [] : [revisionId]
      })
    })

  const remove: RepositoryClients["remove"] = (ref) =>
    Effect.gen(function* () {
      yield* checkRef(ref)
      const namespace = yield* findNamespace(cluster, ref.namespaceId)
      if (namespace !== undefined) yield* cluster.remove(secretRef(namespace, ref))
    })

  return { write, sessions, environment, revisions, remove }
}
