/**
 * A deployment survives an API server restart: while the driver waits for the gateway, the real
 * `kube-apiserver` is stopped and started again on the same etcd; the start completes once the
 * API answers again. This file runs its own cluster, so the restart never disturbs the other
 * Kubernetes test files sharing the run's cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Fiber, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime } from "../../../testing/gatewayRuntime.js"
import { apiserverReady, type ClusterState, startApiserver, startCluster, stopCluster, stopGroup } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver, readObject } from "../../../testing/kubernetes/driver.js"
import { startTestNode, type TestNode } from "../../../testing/kubernetes/testNode.js"

const KEY = "sk-fake-restart-0123456789"
let state: ClusterState
let node: TestNode
let fake: FakeModelServer
let dir: string
const namespace = { id: NamespaceId.make() }

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-k8s-restart-"))
  ;[state] = await Promise.all([startCluster(path.join(dir, "cluster")), ensureTestRuntime()])
  fake = await startFakeModelServer({ apiKey: KEY })
  node = await startTestNode(clusterOf(state), {
    name: "restart-node",
    workDir: path.join(dir, "node"),
    owns: (name) => name === Compute.kubernetesNamespace(namespace)
  })
}, 20 * 60_000)

afterAll(async () => {
  await node?.stop()
  await fake?.close()
  if (state !== undefined) await stopCluster(state)
  fs.rmSync(dir, { recursive: true, force: true })
}, 120_000)

describe("kubernetes driver and an API server restart", () => {
  it.live("a start in progress completes after the API server restarts", () =>
    Effect.gen(function* () {
      const driver = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(5) })
      yield* driver.provisionNamespace(namespace)
      const ref = { namespaceId: namespace.id, agentId: "agt_restart", revisionId: "rev_restart" }
      const start = yield* Effect.fork(driver.startGateway({
        ...ref,
        values: {
          models: {
            providers: {
              fake: {
                baseUrl: fake.baseUrl,
                api: "openai-completions",
                apiKey: { source: "env", provider: "default", id: "FAKE_MODEL_KEY" },
                models: [{ id: fake.model, name: "Fake" }]
              }
            }
          },
          agents: { defaults: { model: `fake/${fake.model}` } }
        },
        env: { FAKE_MODEL_KEY: Redacted.make(KEY) }
      }))
      const name = Compute.agentObjectName(ref.agentId)
      const cluster = clusterOf(state)
      const applied = () => readObject(cluster, { apiVersion: "apps/v1", kind: "Deployment", namespace: Compute.kubernetesNamespace(namespace), name })
      yield* Effect.promise(async () => {
        while ((await applied()) === undefined) await new Promise((resolve) => setTimeout(resolve, 200))
      })

      yield* Effect.promise(() => stopGroup(state.pids.apiserver))
      expect(yield* Effect.promise(() => apiserverReady(state).catch(() => false))).toBe(false)
      yield* Effect.sleep(Duration.seconds(2))
      const apiserver = yield* Effect.promise(() => startApiserver(state))
      state = { ...state, pids: { ...state.pids, apiserver } }

      yield* Fiber.join(start)
      expect(yield* driver.gatewayHealth(ref)).toBe("healthy")
      expect((yield* Effect.promise(applied))?.metadata?.labels?.["svc/revision-id"]).toBe("rev_restart")
      yield* driver.deleteGateway(ref)
    }), 10 * 60_000)
})
