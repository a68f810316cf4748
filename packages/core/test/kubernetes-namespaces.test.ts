/**
 * The `kubernetes` driver's Namespace half against a real API server and controller manager (the
 * run's shared cluster, testing/kubernetes): namespace, quota, limits and policies exist with
 * their exact specs; provisioning is idempotent; an operator's `existingNamespace` is labelled,
 * checked and never deleted; teardown of ours waits until the namespace is gone.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Effect, Exit } from "effect"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver, readObject } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"

let state: ClusterState
let driver: Compute.ComputeDriverShape
let cluster: Compute.Cluster

beforeAll(async () => {
  state = await sharedCluster()
  driver = kubernetesDriver(state)
  cluster = clusterOf(state)
}, 180_000)

const failureOf = <A>(exit: Exit.Exit<A, Compute.ComputeError>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${JSON.stringify(exit)}`)
  return exit.cause.error
}

const policy = (namespace: string, name: string) =>
  readObject<{ spec: unknown }>(cluster, { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", namespace, name })

describe("kubernetes Namespace half", () => {
  it.live("provisions a namespace with quota, limits and policies, idempotently, and tears it down", () =>
    Effect.gen(function* () {
      const namespace = { id: NamespaceId.make() }
      const name = Compute.kubernetesNamespace(namespace)
      expect(name).toMatch(/^svc-[0-9a-f]{16}$/)
      yield* driver.provisionNamespace(namespace)
      yield* driver.provisionNamespace(namespace) // a repeat converges to the same objects
      const created = yield* Effect.promise(() => readObject(cluster, { apiVersion: "v1", kind: "Namespace", name }))
      expect(created?.metadata?.labels).toEqual({
        "app.kubernetes.io/managed-by": "svc",
        "svc/namespace-id": namespace.id,
        "svc/owned": "true"
      })
      const quota = yield* Effect.promise(() =>
        readObject<{ spec: { hard: Record<string, string> } }>(cluster, { apiVersion: "v1", kind: "ResourceQuota", namespace: name, name: "svc-quota" })
      )
      expect(quota?.spec.hard).toEqual({
        pods: "50",
        "requests.cpu": "16",
        "requests.memory": "64Gi",
        "limits.memory": "128Gi",
        persistentvolumeclaims: "50",
        "requests.storage": "500Gi",
        "services.loadbalancers": "0",
        "services.nodeports": "0"
      })
      const limits = yield* Effect.promise(() =>
        readObject<{ spec: unknown }>(cluster, { apiVersion: "v1", kind: "LimitRange", namespace: name, name: "svc-limits" })
      )
      expect(limits?.spec).toEqual({
        limits: [{
          type: "Container",
          default: { cpu: "2", memory: "2Gi" },
          defaultRequest: { cpu: "250m", memory: "1Gi" },
          max: { cpu: "4", memory: "8Gi" }
        }]
      })
      expect((yield* Effect.promise(() => policy(name, "svc-default-deny")))?.spec).toEqual({
        podSelector: {},
        policyTypes: ["Ingress", "Egress"]
      })
      expect((yield* Effect.promise(() => policy(name, "svc-allow-dns")))?.spec).toEqual({
        podSelector: {},
        policyTypes: ["Egress"],
        egress: [{
          to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
          ports: [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }]
        }]
      })
      const gatewayPods = { matchLabels: { "app.kubernetes.io/managed-by": "svc", "app.kubernetes.io/component": "gateway" } }
      expect((yield* Effect.promise(() => policy(name, "svc-gateway-egress")))?.spec).toEqual({
        podSelector: gatewayPods,
        policyTypes: ["Egress"],
        egress: [{
          to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10"] } }],
          ports: [{ protocol: "TCP", port: 443 }]
        }]
      })
      expect((yield* Effect.promise(() => policy(name, "svc-gateway-ingress")))?.spec).toEqual({
        podSelector: gatewayPods,
        policyTypes: ["Ingress"],
        ingress: [{ from: [{ namespaceSelector: { matchLabels: { "svc/control-plane": "true" } } }], ports: [{ protocol: "TCP", port: 18789 }] }]
      })

      yield* driver.teardownNamespace(namespace)
      expect(yield* Effect.promise(() => readObject(cluster, { apiVersion: "v1", kind: "Namespace", name }))).toBeUndefined()
      yield* driver.teardownNamespace(namespace) // nothing there is success
    }), 180_000)

  it.live("two Namespaces get two namespaces, and no policy of one admits the other", () =>
    Effect.gen(function* () {
      const a = { id: NamespaceId.make() }
      const b = { id: NamespaceId.make() }
      yield* driver.provisionNamespace(a)
      yield* driver.provisionNamespace(b)
      const [nameA, nameB] = [Compute.kubernetesNamespace(a), Compute.kubernetesNamespace(b)]
      expect(nameA).not.toBe(nameB)
      for (const name of [nameA, nameB]) {
        const ingress = (yield* Effect.promise(() => policy(name, "svc-gateway-ingress")))?.spec as {
          ingress: Array<{ from: Array<{ namespaceSelector: { matchLabels: Record<string, string> } }> }>
        }
        // The only admitted peers carry the control-plane label, which a tenant namespace never has.
        expect(ingress.ingress.flatMap((rule) => rule.from.map((peer) => peer.namespaceSelector.matchLabels))).toEqual([
          { "svc/control-plane": "true" }
        ])
        const labels = (yield* Effect.promise(() => readObject(cluster, { apiVersion: "v1", kind: "Namespace", name })))?.metadata?.labels
        expect(labels?.["svc/control-plane"]).toBeUndefined()
      }
      yield* driver.teardownNamespace(a)
      yield* driver.teardownNamespace(b)
    }), 180_000)

  it.live("binds an operator's existing namespace, refuses one bound elsewhere, and never deletes it", () =>
    Effect.gen(function* () {
      const existingNamespace = `operator-${NamespaceId.make().slice(3, 11)}`
      // Created as an operator would (a plain create, not the driver's field manager).
      yield* Effect.promise(() =>
        Effect.runPromise(cluster.send({
          method: "POST",
          path: "/api/v1/namespaces",
          body: { apiVersion: "v1", kind: "Namespace", metadata: { name: existingNamespace, labels: { team: "ops" } } }
        }))
      )
      const missing = { id: NamespaceId.make(), existingNamespace: "not-there" }
      const missingError = failureOf(yield* Effect.exit(driver.provisionNamespace(missing)))
      expect(missingError).toMatchObject({ _tag: "ComputeFailure", code: "EXISTING_NAMESPACE_NOT_FOUND", permanent: false })
      // A name stored before the API checked it never reaches a request path: no namespace can have
      // it. Nor is one of the cluster's own namespaces ever bound, though each exists.
      for (const name of ["..", "ops/../kube-system", "Ops", "default", "kube-system", "kube-public", "kube-node-lease"]) {
        const invalid = failureOf(yield* Effect.exit(driver.provisionNamespace({ id: NamespaceId.make(), existingNamespace: name })))
        expect(invalid, name).toMatchObject({ _tag: "ComputeFailure", code: "EXISTING_NAMESPACE_NOT_FOUND", permanent: true })
      }
      const system = yield* Effect.promise(() => readObject(cluster, { apiVersion: "v1", kind: "Namespace", name: "kube-system" }))
      expect(system?.metadata?.labels?.["svc/namespace-id"]).toBeUndefined()

      const bound = { id: NamespaceId.make(), existingNamespace }
      yield* driver.provisionNamespace(bound)
      const labelled = yield* Effect.promise(() => readObject(cluster, { apiVersion: "v1", kind: "Namespace", name: existingNamespace }))
      expect(labelled?.metadata?.labels).toEqual({
        team: "ops",
        "app.kubernetes.io/managed-by": "svc",
        "svc/namespace-id": bound.id,
        "svc/owned": "false"
      })
      expect((yield* Effect.promise(() => policy(existingNamespace, "svc-default-deny")))?.spec).toEqual({
        podSelector: {},
        policyTypes: ["Ingress", "Egress"]
      })

      const other = { id: NamespaceId.make(), existingNamespace }
      const taken = failureOf(yield* Effect.exit(driver.provisionNamespace(other)))
      expect(taken).toMatchObject({ _tag: "ComputeFailure", code: "EXISTING_NAMESPACE_TAKEN", permanent: true })
      // Nor may a Namespace bind a namespace the driver created for another.
      const ours = { id: NamespaceId.make() }
      yield* driver.provisionNamespace(ours)
      const hijack = failureOf(yield* Effect.exit(driver.provisionNamespace({ id: NamespaceId.make(), existingNamespace: Compute.kubernetesNamespace(ours) })))
      expect(hijack).toMatchObject({ code: "EXISTING_NAMESPACE_TAKEN", permanent: true })
      yield* driver.teardownNamespace(ours)

      yield* driver.teardownNamespace(bound)
      const after = yield* Effect.promise(() => readObject(cluster, { apiVersion: "v1", kind: "Namespace", name: existingNamespace }))
      expect(after?.metadata?.deletionTimestamp).toBeUndefined()
      expect(after?.metadata?.labels).toEqual({ team: "ops" })
      expect(yield* Effect.promise(() => policy(existingNamespace, "svc-default-deny"))).toBeUndefined()
      expect(yield* Effect.promise(() => readObject(cluster, { apiVersion: "v1", kind: "ResourceQuota", namespace: existingNamespace, name: "svc-quota" }))).toBeUndefined()
    }), 180_000)
})
