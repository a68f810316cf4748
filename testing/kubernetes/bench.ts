/**
 * The `kubernetes` row of `npm run bench:agents` (scripts/bench-agents.mjs runs this with
 * vite-node and prints what it writes to stdout as one JSON line): its own real API server and
 * controllers (testing/kubernetes/cluster.ts) with the test node, and the `kubernetes` Compute
 * Driver starting one Agent's gateway per run (with the model probe, answered by a model server
 * on loopback). Each run is timed from the start call to: the Pod's gateway process spawned by
 * the test node (the driver's applies, the Deployment and ReplicaSet controllers, binding),
 * the Deployment Available (the gateway's own start and `/readyz`, the test node's report), and
 * the start returning (the driver's readiness check and the model probe).
 * BENCH_K8S_DEPLOYS (2) starts, one gateway at a time (~1.2 GiB).
 */
import type { KubernetesObject } from "@kubernetes/client-node"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startFakeModelServer } from "../fakeModelServer.js"
import { ensureTestRuntime } from "../gatewayRuntime.js"
import { startCluster, stopCluster } from "./cluster.js"
import { clusterOf, kubernetesDriver } from "./driver.js"
import { startTestNode } from "./testNode.js"

const runs = Number.parseInt(process.env.BENCH_K8S_DEPLOYS ?? "2", 10)
const KEY = "sk-bench-k8s-model"

const main = async () => {
  await ensureTestRuntime()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-k8s-"))
  const state = await startCluster(path.join(dir, "cluster"))
  const cluster = clusterOf(state)
  const fake = await startFakeModelServer({ apiKey: KEY })
  const namespace = { id: NamespaceId.make() }
  const kns = Compute.kubernetesNamespace(namespace)
  const node = await startTestNode(cluster, { name: "bench-node", workDir: path.join(dir, "node"), owns: (name) => name === kns })
  const driver = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(4) })
  const results: Array<{ toSpawnMs: number; toAvailableMs: number; toReturnedMs: number }> = []
  try {
    await Effect.runPromise(driver.provisionNamespace(namespace))
    for (let run = 1; run <= runs; run++) {
      const agentId = `agt_bench${run}`
      const marks: { spawned?: number; available?: number } = {}
      let watching = true
      const started = performance.now()
      // Observed beside the start: the Pod's gateway process and the Deployment's Available condition.
      const watch = (async () => {
        while (watching) {
          if (marks.spawned === undefined && [...node.processes().values()].some((p) => p.pid !== undefined)) marks.spawned = performance.now()
          const deployment = await Effect.runPromise(
            cluster.read<KubernetesObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>({
              apiVersion: "apps/v1",
              kind: "Deployment",
              namespace: kns,
              name: Compute.agentObjectName(agentId)
            })
          )
          if (marks.available === undefined && deployment?.status?.conditions?.some((c) => c.type === "Available" && c.status === "True")) {
            marks.available = performance.now()
          }
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      })()
      await Effect.runPromise(driver.startGateway({
        namespaceId: namespace.id,
        agentId,
        revisionId: `rev_bench${run}`,
        values: {
          models: {
            providers: {
              fake: { baseUrl: fake.baseUrl, api: "openai-completions", apiKey: { source: "env", provider: "default", id: "MODEL_API_KEY" }, models: [{ id: fake.model, name: "Fake" }] }
            }
          },
          agents: { defaults: { model: `fake/${fake.model}` } }
        },
        env: { MODEL_API_KEY: Redacted.make(KEY) },
        modelProbe: {}
      }))
      const returned = performance.now()
      watching = false
      await watch
      if (marks.spawned === undefined || marks.available === undefined) throw new Error("the start returned before the gateway was seen Available")
      results.push({ toSpawnMs: marks.spawned - started, toAvailableMs: marks.available - started, toReturnedMs: returned - started })
      await Effect.runPromise(driver.deleteGateway({ namespaceId: namespace.id, agentId, revisionId: `rev_bench${run}` }))
      while (node.processes().size > 0) await new Promise((resolve) => setTimeout(resolve, 200))
    }
  } finally {
    await node.stop()
    await fake.close()
    await stopCluster(state)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  process.stdout.write(`${JSON.stringify({ runs: results })}\n`)
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error("bench kubernetes failed:", error)
    process.exit(1)
  }
)
