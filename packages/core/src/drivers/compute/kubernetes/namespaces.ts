/**
 * The Namespace half of the `kubernetes` driver. Provisioning applies the namespace (ours) or
 * labels the operator's `existingNamespace`, then its quota, limits and policies; every step is
 * server-side apply, so a repeat after a crash at any point converges. Teardown deletes a
 * namespace we own and waits until the namespace controller has removed it; from an operator's
 * namespace it removes only our objects and labels.
 */
import type { KubernetesObject } from "@kubernetes/client-node"
import { Duration, Effect, Schedule } from "effect"
import { isBindableNamespaceName } from "../../../schema/strings.js"
import type { ComputeDriverShape, NamespaceRuntime } from "../driver.js"
import { type Cluster, failure, KubernetesCodes } from "./client.js"
import { kubernetesNamespace, LABELS } from "./names.js"
import { NAMESPACE_OBJECTS, namespaceManifest, namespaceObjects } from "./namespaceObjects.js"
import { withExportedSpan } from "../../../observability/spans.js"

type NamespaceHalf = Pick<ComputeDriverShape, "provisionNamespace" | "teardownNamespace">

export interface NamespaceOptions {
  /** How long teardown waits for the namespace controller (default 2 min; then retried). */
  readonly deletionWait?: Duration.DurationInput | undefined
}

const namespaceRef = (name: string) => ({ apiVersion: "v1", kind: "Namespace", name })

const isTerminating = (object: KubernetesObject) => object.metadata?.deletionTimestamp !== undefined

export const makeKubernetesNamespaces = (cluster: Cluster, options: NamespaceOptions = {}): NamespaceHalf => {
  const terminating = failure(
    KubernetesCodes.NAMESPACE_TERMINATING,
    "The Namespace's Kubernetes namespace is still being deleted.",
    false
  )

  /**
   * The operator's namespace, checked: a namespace name that is not one of the cluster's own (the
   * API admits no other since it checks them, with the same rule; a row stored before that must
   * not put `..` into a request path, nor a tenant into `kube-system`), it exists, and no other
   * Namespace has bound it.
   */
  const checkExisting = (namespace: NamespaceRuntime, name: string) =>
    Effect.gen(function* () {
      if (!isBindableNamespaceName(name)) {
        return yield* failure(
          KubernetesCodes.EXISTING_NAMESPACE_NOT_FOUND,
          "The existing runtime namespace is not a namespace a Namespace may bind.",
          true
        )
      }
      const existing = yield* cluster.read(namespaceRef(name))
      if (existing === undefined) {
        return yield* failure(KubernetesCodes.EXISTING_NAMESPACE_NOT_FOUND, "The existing runtime namespace does not exist.", false)
      }
      const labels = existing.metadata?.labels ?? {}
      const boundTo = labels[LABELS.namespaceId]
      if ((boundTo !== undefined && boundTo !== namespace.id) || labels[LABELS.owned] === "true") {
        return yield* failure(
          KubernetesCodes.EXISTING_NAMESPACE_TAKEN,
          "The existing runtime namespace already belongs to another Namespace.",
          true
        )
      }
      if (isTerminating(existing)) return yield* terminating
    })

  const provisionNamespace: NamespaceHalf["provisionNamespace"] = (namespace) =>
    Effect.gen(function* () {
      const name = kubernetesNamespace(namespace)
      if (namespace.existingNamespace !== undefined) yield* checkExisting(namespace, name)
      else {
        const current = yield* cluster.read(namespaceRef(name))
        if (current !== undefined && isTerminating(current)) return yield* terminating
      }
      yield* cluster.apply(namespaceManifest(namespace))
      for (const object of namespaceObjects(namespace)) yield* cluster.apply(object)
    }).pipe(withExportedSpan("KubernetesCompute.provisionNamespace", { attributes: { namespaceId: namespace.id } }))

  const waitGone = (name: string) =>
    cluster.read(namespaceRef(name)).pipe(
      Effect.flatMap((object) => (object === undefined ? Effect.void : Effect.fail(terminating))),
      Effect.retry({
        schedule: Schedule.spaced(Duration.seconds(1)).pipe(
          Schedule.upTo(options.deletionWait ?? Duration.minutes(2))
        ),
        while: (error) => error.code === KubernetesCodes.NAMESPACE_TERMINATING
      })
    )

  const teardownNamespace: NamespaceHalf["teardownNamespace"] = (namespace) =>
    Effect.gen(function* () {
      const name = kubernetesNamespace(namespace)
      if (namespace.existingNamespace === undefined) {
        yield* cluster.remove(namespaceRef(name))
        return yield* waitGone(name)
      }
      const existing = yield* cluster.read(namespaceRef(name))
      // Never touch an operator's namespace another Namespace has bound since.
      if (existing === undefined || existing.metadata?.labels?.[LABELS.namespaceId] !== namespace.id) return
      for (const ref of Object.values(NAMESPACE_OBJECTS)) yield* cluster.remove({ ...ref, namespace: name })
      // Applying the namespace without labels drops the ones this field manager set.
      yield* cluster.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
    }).pipe(withExportedSpan("KubernetesCompute.teardownNamespace", { attributes: { namespaceId: namespace.id } }))

  return { provisionNamespace, teardownNamespace }
}
