/**
 * Cross-tenant isolation on the `kubernetes` Compute Driver (issue 14), asserted on the objects a
 * real API server and controller manager hold (the run's shared cluster): two Namespaces'
 * Agents get every object (Deployment, ReplicaSet, Pod, Service, Secret, ConfigMap, volume) in
 * their own Kubernetes namespace, none in the other's; and the NetworkPolicies, evaluated over
 * the Pods, namespaces and policies read back (testing/kubernetes/networkPolicy.ts; no network
 * plugin runs here), deny every connection between the two Namespaces' gateways, in both
 * directions, while they admit the control plane, DNS and public HTTPS.
 *
 * No test node runs: the Deployments' Pods stay Pending (the starts end GATEWAY_START_TIMEOUT),
 * which is all the objects need.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Exit, Schedule } from "effect"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver } from "../../../testing/kubernetes/driver.js"
import { allowed, type Endpoint, type NetworkPolicyObject } from "../../../testing/kubernetes/networkPolicy.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"

let state: ClusterState
let driver: Compute.ComputeDriverShape
let cluster: Compute.Cluster
const tenants = [{ id: NamespaceId.make() }, { id: NamespaceId.make() }] as const
const agents = ["agt_crosstenanta00000000000000", "agt_crosstenantb00000000000000"] as const

beforeAll(async () => {
  state = await sharedCluster()
  driver = kubernetesDriver(state, { readinessTimeout: Duration.seconds(3) })
  cluster = clusterOf(state)
}, 180_000)

afterAll(async () => {
  for (const tenant of tenants) await Effect.runPromise(driver.teardownNamespace(tenant))
}, 240_000)

interface Item {
  readonly kind?: string
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> }
}

const get = <T>(path: string) => Effect.promise(() => Effect.runPromise(cluster.send({ method: "GET", path })) as Promise<T>)
const listAll = (path: string, selector: string) =>
  get<{ items: ReadonlyArray<Item> }>(`${path}?labelSelector=${encodeURIComponent(selector)}`).pipe(Effect.map((list) => list.items))

const KINDS = [
  ["Deployment", "/apis/apps/v1/deployments"],
  ["ReplicaSet", "/apis/apps/v1/replicasets"],
  ["Pod", "/api/v1/pods"],
  ["Service", "/api/v1/services"],
  ["Secret", "/api/v1/secrets"],
  ["ConfigMap", "/api/v1/configmaps"],
  ["PersistentVolumeClaim", "/api/v1/persistentvolumeclaims"]
] as const

const spec = (index: 0 | 1): Compute.GatewaySpec => ({
  namespaceId: tenants[index].id,
  agentId: agents[index],
  revisionId: `rev_crosstenant${index}0000000000000000`,
  values: {},
  env: {}
})

describe("kubernetes cross-tenant isolation", () => {
  it.live("two Namespaces' Agents never share a Kubernetes namespace, and their policies deny traffic between them", () =>
    Effect.gen(function* () {
      const names = tenants.map((tenant) => Compute.kubernetesNamespace(tenant))
      expect(names[0]).not.toBe(names[1])
      for (const index of [0, 1] as const) {
        yield* driver.provisionNamespace(tenants[index])
        const started = yield* Effect.exit(driver.startGateway(spec(index)))
        expect(Exit.isFailure(started) && started.cause._tag === "Fail" ? started.cause.error : started)
          .toMatchObject({ _tag: "ComputeFailure", code: "GATEWAY_START_TIMEOUT" })
      }
      // The ReplicaSet controller creates each Deployment's Pod (Pending: no node runs here).
      for (const agentId of agents) yield* waitForPod(agentId)

      // Every object of each Namespace's Agent, looked for across the whole cluster.
      for (const index of [0, 1] as const) {
        const other = 1 - index
        for (const [kind, path] of KINDS) {
          const byNamespace = yield* listAll(path, `svc/namespace-id=${tenants[index].id}`)
          const byAgent = yield* listAll(path, `svc/agent-id=${agents[index]}`)
          expect(byAgent.length, `${kind} of Agent ${index}`).toBeGreaterThanOrEqual(1)
          expect(byAgent.map((item) => item.metadata.namespace), kind).toEqual(byAgent.map(() => names[index]))
          expect(byNamespace.map((item) => item.metadata.namespace), kind).toEqual(byNamespace.map(() => names[index]))
          expect(byNamespace.some((item) => item.metadata.labels?.["svc/agent-id"] === agents[other]), kind).toBe(false)
        }
      }

      // The policies, the namespaces' labels and the Pods, as the API server holds them.
      const policies = (yield* get<{ items: ReadonlyArray<NetworkPolicyObject> }>("/apis/networking.k8s.io/v1/networkpolicies")).items
        .filter((policy) => names.includes(policy.metadata.namespace))
      expect(policies.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort()).toEqual(
        names.flatMap((name) =>
          ["svc-allow-dns", "svc-default-deny", "svc-gateway-egress", "svc-gateway-ingress"].map((policy) => `${name}/${policy}`)
        ).sort()
      )
      const namespaces = new Map<string, Record<string, string>>()
      for (const name of names) {
        namespaces.set(name, (yield* get<Item>(`/api/v1/namespaces/${name}`)).metadata.labels ?? {})
      }
      // The namespace the service runs in, labelled for the control plane by the operator (README), and kube-dns's.
      namespaces.set("svc-system", { [Compute.CONTROL_PLANE_LABEL]: "true" })
      namespaces.set("kube-system", {})
      const world = { policies, namespaces }
      const pods = yield* Effect.forEach([0, 1] as const, (index) =>
        listAll(`/api/v1/namespaces/${names[index]}/pods`, `svc/agent-id=${agents[index]}`).pipe(
          Effect.map((items): Endpoint => ({ namespace: names[index], labels: items[0]!.metadata.labels ?? {}, ip: `10.244.${index}.10` }))
        ))
      const [a, b] = [pods[0]!, pods[1]!]

      for (const [from, to] of [[a, b], [b, a]] as const) {
        // Gateway to gateway, on the gateway port and any other: denied both ways.
        expect(allowed(world, from, to, Compute.GATEWAY_PORT)).toBe(false)
        expect(allowed(world, from, to, 443)).toBe(false)
        expect(allowed(world, from, to, 53, "UDP")).toBe(false)
        // Any other Pod of the other namespace (not a gateway) is closed too.
        expect(allowed(world, from, { namespace: to.namespace, labels: { app: "other" }, ip: "10.244.9.9" }, 8080)).toBe(false)
      }
      for (const pod of [a, b]) {
        const controlPlane = { namespace: "svc-system", labels: { app: "svc-api" }, ip: "10.244.7.7" }
        expect(allowed(world, controlPlane, pod, Compute.GATEWAY_PORT)).toBe(true)
        expect(allowed(world, controlPlane, pod, 22)).toBe(false)
        const dns = { namespace: "kube-system", labels: { "k8s-app": "kube-dns" }, ip: "10.244.8.8" }
        expect(allowed(world, pod, dns, 53, "UDP")).toBe(true)
        expect(allowed(world, pod, { ip: "203.0.113.7" }, 443)).toBe(true)
        expect(allowed(world, pod, { ip: "203.0.113.7" }, 80)).toBe(false)
        // Private ranges (cluster, node and metadata addresses) stay closed even on 443.
        for (const ip of ["10.0.0.1", "172.16.5.5", "192.168.1.1", "169.254.169.254", "100.64.0.1"]) {
          expect(allowed(world, pod, { ip }, 443), ip).toBe(false)
        }
      }
    }), 300_000)
})

const waitForPod = (agentId: string) =>
  listAll("/api/v1/pods", `svc/agent-id=${agentId}`).pipe(
    Effect.filterOrFail((pods) => pods.length === 1, () => "no Pod yet"),
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(500)), times: 240 })
  )
