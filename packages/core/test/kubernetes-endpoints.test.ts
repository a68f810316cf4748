/**
 * How the `kubernetes` driver reaches gateways from outside the cluster: the API server's Service
 * proxy (`endpoints: "apiServerProxy"`, the default with a kubeconfig) behind the same resolver
 * interface as the tests' loopback resolver. Only its unreachable paths can run here, and they
 * run for real (the API server refuses to proxy to loopback, and no test may connect anywhere
 * else: ../shared/k8s/README.md): a Service without a ready endpoint, as the real API server
 * answers for it, and an API server that does not listen. Each ends in the driver's retryable
 * failure that the API answers 503 for (diagnostics, the native admin proxy's endpoint).
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { freePort } from "@svc/core/embedded-postgres"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"

let state: ClusterState
let cluster: Compute.Cluster

beforeAll(async () => {
  state = await sharedCluster()
  cluster = clusterOf(state)
}, 180_000)

const failureOf = <A>(exit: Exit.Exit<A, Compute.ComputeError>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${JSON.stringify(exit)}`)
  return exit.cause.error
}

/** The driver as `svc` builds it from the Installation settings: a kubeconfig, so the Service proxy. */
const driverFor = (kubeconfigPath: string) =>
  Kubernetes.makeKubernetesComputeFor(
    Kubernetes.makeCluster(Kubernetes.loadKubeConfig({ kubeconfigPath, context: "test" })),
    { kubeconfigPath, context: "test" },
    { readinessTimeout: Duration.seconds(3), scope: `endpoints-${process.pid}` }
  )

const spec = (namespaceId: NamespaceId): Compute.GatewaySpec => ({
  namespaceId,
  agentId: `agt_endpoints${process.pid}`,
  revisionId: "rev_endpoints0000000000",
  values: {},
  env: {}
})

describe("kubernetes endpoints through the API server's Service proxy", () => {
  it.live("a Service without a ready endpoint: the resolver refuses, the proxy answers 503", () =>
    Effect.gen(function* () {
      const namespace = { id: NamespaceId.make() }
      const driver = driverFor(state.kubeconfig)
      yield* driver.provisionNamespace(namespace)
      const name = Compute.kubernetesNamespace(namespace)
      yield* cluster.apply({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "no-pods", namespace: name },
        spec: { type: "ClusterIP", selector: { app: "nothing-runs-this" }, ports: [{ protocol: "TCP", port: Compute.GATEWAY_PORT, targetPort: Compute.GATEWAY_PORT }] }
      })
      const address = { namespace: name, service: "no-pods", port: Compute.GATEWAY_PORT }
      const proxy = Kubernetes.apiServerProxyResolver(cluster)
      expect(failureOf(yield* Effect.exit(proxy.resolve(address)))).toMatchObject({
        _tag: "ComputeFailure",
        code: "GATEWAY_UNREACHABLE",
        message: "The gateway's Service has no ready endpoint.",
        permanent: false
      })
      // The forwarder itself reaches the real API server, whose Service proxy has nowhere to go.
      const base = yield* proxy.forwarder(address)
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const answer = yield* Effect.promise(() => fetch(`${base}/readyz`, { headers: { authorization: "Bearer gateway-token" } }))
      const body = yield* Effect.promise(() => answer.text())
      expect(answer.status).toBe(503)
      expect(JSON.parse(body)).toMatchObject({ kind: "Status", code: 503, message: 'no endpoints available for service "no-pods"' })
      // A WebSocket handshake (the Control UI's) is forwarded as an upgrade; the API server's refusal comes back.
      const upgrade = yield* Effect.promise(() =>
        new Promise<number | "upgraded">((resolve, reject) => {
          const request = http.request(`${base}/`, {
            headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" }
          })
          request.on("response", (response) => {
            response.resume()
            resolve(response.statusCode ?? 0)
          })
          request.on("upgrade", (_response, socket) => {
            socket.destroy()
            resolve("upgraded")
          })
          request.on("error", reject)
          request.end()
        })
      )
      expect(upgrade).toBe(503)
      yield* Effect.promise(() => proxy.close())
      yield* driver.teardownNamespace(namespace)
    }), 180_000)

  it.live("an Agent whose Pod never runs: start times out, its endpoint is unreachable, diagnostics say why", () =>
    Effect.gen(function* () {
      const namespace = { id: NamespaceId.make() }
      const driver = driverFor(state.kubeconfig)
      yield* driver.provisionNamespace(namespace)
      const gateway = spec(namespace.id)
      // No node runs this file's Pods: the Deployment's Pod stays Pending, its Service has no endpoint.
      expect(failureOf(yield* Effect.exit(driver.startGateway(gateway)))).toMatchObject({ code: "GATEWAY_START_TIMEOUT", permanent: false })
      expect(failureOf(yield* Effect.exit(driver.privateEndpoint(gateway)))).toMatchObject({
        code: "GATEWAY_UNREACHABLE",
        permanent: false
      })
      expect(yield* driver.diagnostics(gateway)).toEqual([
        { name: "deployment.available", status: "fail", message: "The Deployment is not Available." },
        { name: "pod.phase", status: "fail", message: "The Pod is Pending." },
        { name: "pod.restarts", status: "pass", message: "The gateway container restarted 0 times." },
        { name: "gateway.ready", status: "fail", message: "The gateway is not ready." }
      ])
      // Past its start budget (3 s here) a gateway that is not Available is unhealthy.
      expect(yield* driver.gatewayHealth(gateway)).toBe("unhealthy")
      yield* driver.deleteGateway(gateway)
      yield* driver.teardownNamespace(namespace)
    }), 180_000)

  it.live("an API server that does not listen: every read fails CLUSTER_UNAVAILABLE, retryably", () =>
    Effect.gen(function* () {
      // The test kubeconfig, pointed at a loopback port where nothing listens (a stopped API server).
      const port = yield* Effect.promise(() => freePort())
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-k8s-down-"))
      const kubeconfig = path.join(dir, "kubeconfig")
      fs.writeFileSync(kubeconfig, fs.readFileSync(state.kubeconfig, "utf8").replace(state.server, `https://127.0.0.1:${port}`))
      const driver = driverFor(kubeconfig)
      const gateway = spec(NamespaceId.make())
      const unavailable = {
        _tag: "ComputeFailure",
        code: "CLUSTER_UNAVAILABLE",
        message: "The Kubernetes API server could not be reached or did not answer.",
        permanent: false
      }
      expect(failureOf(yield* Effect.exit(driver.privateEndpoint(gateway)))).toEqual(expect.objectContaining(unavailable))
      expect(failureOf(yield* Effect.exit(driver.diagnostics(gateway)))).toEqual(expect.objectContaining(unavailable))
      expect(failureOf(yield* Effect.exit(driver.gatewayHealth(gateway)))).toEqual(expect.objectContaining(unavailable))
      const proxy = Kubernetes.apiServerProxyResolver(Kubernetes.makeCluster(Kubernetes.loadKubeConfig({ kubeconfigPath: kubeconfig, context: "test" })))
      const address = { namespace: "svc-anything", service: "agent-anything", port: Compute.GATEWAY_PORT }
      expect(failureOf(yield* Effect.exit(proxy.resolve(address)))).toEqual(expect.objectContaining(unavailable))
      // Whatever still holds a forwarder gets an answer, not a hang: 502 from the forwarder.
      const base = yield* proxy.forwarder(address)
      expect((yield* Effect.promise(() => fetch(`${base}/readyz`))).status).toBe(502)
      yield* Effect.promise(() => proxy.close())
      fs.rmSync(dir, { recursive: true, force: true })
    }), 60_000)
})
