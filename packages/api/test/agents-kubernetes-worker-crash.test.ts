/**
 * A worker SIGKILLed in the middle of a deployment on the `kubernetes` Compute Driver converges
 * exactly once (issue 14), in the style of agents-worker-crash.test.ts: the API runs in this
 * process, each worker is a child process (testing/kubernetes/workerProcess.ts: `svc worker`
 * with the test node's loopback resolver) on the same database, Secret key and Installation
 * configuration (kubernetes over the run's shared API server), with a 4-second lease.
 *
 * 1. Worker A claims the deployment, applies the Agent's objects and the test node starts the
 *    Pod's gateway; A is SIGKILLed while the item is `running` and the Pod is not yet Available.
 * 2. Worker B takes the item over after A's lease, re-applies (server-side apply: the same
 *    objects, the revision's token kept) and activates the revision: `succeeded` once, one
 *    `agent.revision-activated` audit row, one Deployment (same uid and generation: no rollout),
 *    one ReplicaSet, one Pod and one gateway process (the same pid; its pairing container's too).
 * 3. Diagnostics through the API: every check passes; once the Pod's gateway dies, the
 *    Deployment, readiness and model checks say so.
 */
import { afterAll, beforeAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { defaultInstallationConfig } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Effect, Layer, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createDatabase, dropDatabase } from "../../../testing/database.js"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { startTestNode, type TestNode } from "../../../testing/kubernetes/testNode.js"
import { type SvcProcess, testEntry } from "../../../testing/process.js"
import { TestServer } from "../../../testing/server.js"
import { expectData, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { apiOnlyLayer, deployItem, expectConvergedOnce, untilWithWorkers } from "./support/deployOnce.js"
import { setUpModelAgent } from "./support/modelAgent.js"

const GOOD_KEY = "sk-k8s-crash-good-3b9e1f"
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const secretKey = randomBytes(32)
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-k8s-crash-"))
const endpointsFile = path.join(workDir, "endpoints.json")
const installationFile = path.join(workDir, "installation.json")
const databaseUrl = await createDatabase()
const state: ClusterState = await sharedCluster()
const cluster = clusterOf(state)
/** This file's instance on the shared cluster: the API's driver and the workers' share it. */
const scope = `crash-${process.pid}`
const compute = {
  id: "kubernetes" as const,
  kubeconfigPath: state.kubeconfig,
  context: "test",
  scope
}
const installation = { ...defaultInstallationConfig, drivers: { ...defaultInstallationConfig.drivers, compute } }
const owned = new Set<string>()
const workers: Array<SvcProcess> = []
let node: TestNode
let fake: FakeModelServer

beforeAll(async () => {
  await ensureTestRuntime()
  fake = await startFakeModelServer({ apiKey: GOOD_KEY })
  fs.writeFileSync(installationFile, JSON.stringify({ drivers: { compute } }))
  node = await startTestNode(cluster, {
    name: `node-crash-${randomBytes(4).toString("hex")}`,
    workDir: path.join(workDir, "node"),
    owns: (name) => owned.has(name),
    endpointsFile
  })
}, 20 * 60_000)

afterAll(async () => {
  for (const worker of workers) await worker.stop("SIGKILL")
  await node?.stop()
  for (const name of owned) await Effect.runPromise(cluster.remove({ apiVersion: "v1", kind: "Namespace", name }))
  await fake?.close()
  await dropDatabase(databaseUrl)
  fs.rmSync(workDir, { recursive: true, force: true })
}, 120_000)

const startWorker = () => {
  const worker = testEntry("testing/kubernetes/workerProcess.ts", {
    DATABASE_URL: databaseUrl,
    SVC_DATA_DIR: path.join(workDir, "data"),
    SVC_RUNTIME_DIR: testRuntimeRoot(),
    SVC_SECRET_KEY: secretKey.toString("base64"),
    SVC_WORKER_LEASE_SECONDS: "4",
    SVC_INSTALLATION_CONFIG: installationFile,
    SVC_K8S_TEST_ENDPOINTS: endpointsFile
  })
  workers.push(worker)
  return worker
}

const layer = apiOnlyLayer(Layer.sync(Compute.ComputeDriver, () => kubernetesDriver(state, { scope, resolver: node.resolver })), installation, secretKey, databaseUrl)
const until = untilWithWorkers(workers)

interface Listed {
  readonly items: ReadonlyArray<{
    readonly metadata: { readonly name: string; readonly uid: string; readonly generation?: number; readonly labels?: Record<string, string> }
    readonly status?: { readonly availableReplicas?: number }
  }>
}

const list = (p: string) => Effect.promise(() => Effect.runPromise(cluster.send({ method: "GET", path: p })) as Promise<Listed>)

describe("a worker SIGKILLed mid-deployment on kubernetes", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("the deployment converges exactly once on another worker: one Deployment, one Pod, one gateway", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("k8s-crash-admin@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)

        const workerA = startWorker()
        const { ns, agent, agentPath } = yield* setUpModelAgent(call, { namespace: "k8s-crash", agent: "crash-bot", modelKey: GOOD_KEY, fake })
        const kns = Compute.kubernetesNamespace({ id: Schema.decodeSync(NamespaceId)(ns) })
        owned.add(kns)
        const selector = encodeURIComponent(`svc/agent-id=${agent.id}`)
        const deployments = () => list(`/apis/apps/v1/namespaces/${kns}/deployments?labelSelector=${selector}`)
        const replicaSets = () => list(`/apis/apps/v1/namespaces/${kns}/replicasets?labelSelector=${selector}`)
        const pods = () => list(`/api/v1/namespaces/${kns}/pods?labelSelector=${selector}`)
        const gateways = () => Effect.sync(() => [...node.processes().entries()].filter(([, p]) => p.pid !== undefined))

        // 1. Deploy; SIGKILL worker A once it holds the item and the Pod's gateway process runs.
        const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const item = () => deployItem(revision.id)
        const held = yield* until(item(), (i) => i.state === "running", 60, "deploy claimed by worker A")
        const [applied, running] = yield* until(
          Effect.zip(deployments(), gateways()),
          ([found, processes]) => found.items.length === 1 && processes.length === 1,
          120,
          "Deployment applied and its Pod's gateway started"
        )
        const before = applied.items[0]!
        expect(before.metadata.labels?.["svc/revision-id"]).toBe(revision.id)
        const [podName, gateway] = running[0]!
        expect(yield* item()).toMatchObject({ state: "running", lease_owner: held.lease_owner, attempt_count: 1 })
        const killed = yield* Effect.promise(() => workerA.stop("SIGKILL"))
        expect(killed.signal).toBe("SIGKILL")
        expect((yield* item()).state).toBe("running")

        // 2. Worker B takes the item over after the lease and converges it once.
        const workerB = startWorker()
        yield* expectConvergedOnce(call, until, { ns, agentId: agent.id, revisionId: revision.id })

        // Adopted, not applied twice: the same Deployment at the same generation (no rollout),
        // one ReplicaSet, the same single Pod, the same gateway process.
        const after = (yield* deployments()).items
        expect(after.map((d) => ({ uid: d.metadata.uid, generation: d.metadata.generation, revision: d.metadata.labels?.["svc/revision-id"] })))
          .toEqual([{ uid: before.metadata.uid, generation: before.metadata.generation, revision: revision.id }])
        expect(after[0]!.status?.availableReplicas).toBe(1)
        expect((yield* replicaSets()).items.map((r) => r.metadata.labels?.["svc/revision-id"])).toEqual([revision.id])
        expect((yield* pods()).items.map((p) => p.metadata.name)).toEqual([podName])
        // Its pairing container's process too (the same, never restarted).
        expect(gateway.pairingPid).toBeTypeOf("number")
        expect(yield* gateways()).toEqual([[podName, { pid: gateway.pid, port: gateway.port, ready: true, pairingPid: gateway.pairingPid }]])

        const exit = yield* Effect.promise(() => workerB.stop("SIGTERM"))
        expect(exit.code).toBe(0)

        // 3. Diagnostics through the API, live from the cluster and the gateway (its endpoint
        //    resolved as the driver resolves it): all pass, model authentication included.
        const diagnostics = () => call("POST", `${agentPath}/deployments/${revision.id}/diagnostics`)
        const checked = { checkedAt: expect.stringMatching(TIMESTAMP) }
        expect(expectData(yield* diagnostics(), 200)).toEqual({
          revisionId: revision.id,
          observedAt: expect.stringMatching(TIMESTAMP),
          checks: [
            { component: "deployment", check: "available", state: "succeeded", ...checked },
            { component: "pod", check: "phase", state: "succeeded", ...checked },
            { component: "pod", check: "restarts", state: "succeeded", ...checked },
            { component: "gateway", check: "ready", state: "succeeded", ...checked },
            { component: "model", check: "auth", state: "succeeded", ...checked }
          ]
        })
        // The Pod's gateway dies (no worker runs to restart anything): the Deployment loses its
        // available replica, the gateway is unreachable, and the model check cannot run.
        process.kill(-gateway.pid!, "SIGKILL")
        const failed = yield* until(
          diagnostics(),
          // The test node records the container's restart a moment after the Deployment loses its replica.
          (r) => r.body.data?.checks?.[0]?.state === "failed" && r.body.data?.checks?.[2]?.state === "unknown",
          60,
          "the Deployment no longer Available and the restart recorded"
        )
        expect(expectData(failed, 200).checks).toEqual([
          { component: "deployment", check: "available", state: "failed", ...checked, code: "DEPLOYMENT_AVAILABLE" },
          { component: "pod", check: "phase", state: "succeeded", ...checked },
          { component: "pod", check: "restarts", state: "unknown", ...checked, code: "POD_RESTARTS" },
          { component: "gateway", check: "ready", state: "failed", ...checked, code: "GATEWAY_READY" },
          { component: "model", check: "auth", state: "unknown", checkedAt: null }
        ])
      }), 20 * 60_000)
  })
})
