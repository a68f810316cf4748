/**
 * A worker SIGKILLed in the middle of a deployment (issue: "A second test SIGKILLs the worker in
 * the middle of a deployment and proves the deployment still converges exactly once"), then
 * recovery after a restart. The API runs in this process; each worker is a real `svc worker`
 * child process on the same database, data directory, runtime and Secret key, with a 4-second
 * lease (`SVC_WORKER_LEASE_SECONDS`). One real OpenClaw gateway (~1.2 GiB) at a time.
 *
 * 1. Worker A claims the deployment and spawns the gateway; it is SIGKILLed while the item is
 *    `running`. The gateway (its own process group) survives.
 * 2. Worker B takes the item over after A's lease expires, adopts the live gateway (same pid),
 *    and activates the revision: `succeeded` once, one `agent.revision-activated` audit row, one
 *    gateway process group for the Agent, `activeRevisionId` the revision.
 * 3. The gateway and worker B are SIGKILLed; worker C's recovery sweep at start queues
 *    `agent.recover`, which starts the active revision's gateway again without touching the
 *    revision, the deployment or the audit trail.
 * 4. Stop: worker C removes execution; no gateway process of the Agent is left.
 */
import { afterAll, beforeAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig } from "@svc/core/config"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { createDatabase, dropDatabase } from "../../../testing/database.js"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime, groupAlive, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { svc, type SvcProcess } from "../../../testing/process.js"
import { TestServer } from "../../../testing/server.js"
import { expectData, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { unavailableCompute } from "../../../testing/drivers.js"
import { workItemProgress } from "../../../testing/poll.js"
import { activations, apiOnlyLayer, deployItem, expectConvergedOnce, untilWithWorkers } from "./support/deployOnce.js"
import { setUpModelAgent } from "./support/modelAgent.js"

const GOOD_KEY = "sk-crash-good-7a1d3c9e"
const secretKey = randomBytes(32)
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-crash-"))
const databaseUrl = await createDatabase()
const workers: Array<SvcProcess> = []
let fake: FakeModelServer

beforeAll(async () => {
  await ensureTestRuntime()
  fake = await startFakeModelServer({ apiKey: GOOD_KEY })
}, 20 * 60_000)

afterAll(async () => {
  for (const worker of workers) await worker.stop("SIGKILL")
  // Whatever gateway is left (a failed run) goes with its process group.
  for (const { pid } of await gatewayProcesses(dataDir)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  await fake?.close()
  await dropDatabase(databaseUrl)
  await fs.rm(dataDir, { recursive: true, force: true })
}, 120_000)

interface GatewayProcess {
  readonly pid: number
  readonly ppid: number
}

/**
 * Live processes whose environment names a state directory under `root` (or exactly `stateDir`).
 * OpenClaw runs helpers beside the gateway, one of them (its spawn broker) in a process group
 * of its own, so "one gateway" means one root: one such process whose parent is not one.
 */
async function gatewayProcesses(root: string, stateDir?: string): Promise<Array<GatewayProcess>> {
  const found: Array<GatewayProcess> = []
  for (const entry of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const environ = (await fs.readFile(`/proc/${entry}/environ`, "utf8")).split("\0")
      const state = environ.find((v) => v.startsWith("OPENCLAW_STATE_DIR="))?.slice("OPENCLAW_STATE_DIR=".length)
      if (state === undefined || !(stateDir === undefined ? state.startsWith(root) : state === stateDir)) continue
      const stat = await fs.readFile(`/proc/${entry}/stat`, "utf8")
      // After the command (which may hold spaces): state ppid pgrp ...
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (fields[0] === "Z") continue
      found.push({ pid: Number(entry), ppid: Number(fields[1]) })
    } catch {
      // the process ended while we looked
    }
  }
  return found
}

const gatewayRoots = (processes: ReadonlyArray<GatewayProcess>): Array<number> =>
  processes.filter((p) => !processes.some((parent) => parent.pid === p.ppid)).map((p) => p.pid).sort()

const startWorker = () => {
  const worker = svc("worker", {
    DATABASE_URL: databaseUrl,
    SVC_DATA_DIR: dataDir,
    SVC_RUNTIME_DIR: testRuntimeRoot(),
    SVC_SECRET_KEY: secretKey.toString("base64"),
    SVC_WORKER_LEASE_SECONDS: "4"
  })
  workers.push(worker)
  return worker
}

const kill = (worker: SvcProcess) =>
  Effect.promise(() => worker.stop("SIGKILL")).pipe(Effect.tap((exit) => expect(exit.signal).toBe("SIGKILL")))

const layer = apiOnlyLayer(unavailableCompute, defaultInstallationConfig, secretKey, databaseUrl)
const until = untilWithWorkers(workers)

const readRecord = (file: string) =>
  Effect.promise(() => fs.readFile(file, "utf8").then((text) => JSON.parse(text) as { pid: number; revisionId: string }, () => undefined))

describe("a worker SIGKILLed mid-deployment", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("the deployment converges exactly once on another worker; a restarted worker recovers the gateway", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("crash-admin@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)

        const workerA = startWorker()
        const { ns, agent, agentPath } = yield* setUpModelAgent(call, { namespace: "crash", agent: "crash-bot", modelKey: GOOD_KEY, fake })
        const agentDir = path.join(dataDir, "namespaces", ns, "agents", agent.id)
        const stateDir = path.join(agentDir, "state")
        const recordFile = path.join(agentDir, "gateway.json")

        // 1. Deploy; SIGKILL worker A once it holds the item and the gateway process exists.
        const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const item = () => deployItem(revision.id)
        const held = yield* until(item(), (i) => i.state === "running", 60, "deploy claimed by worker A")
        const spawned = yield* until(
          Effect.zip(readRecord(recordFile), Effect.promise(() => gatewayProcesses(dataDir, stateDir).then(gatewayRoots))),
          ([record, groups]) => record !== undefined && groups.includes(record.pid),
          60,
          "gateway spawned"
        )
        const gatewayPid = spawned[0]!.pid
        expect(yield* item()).toMatchObject({ state: "running", lease_owner: held.lease_owner, attempt_count: 1 })
        yield* kill(workerA)
        expect(yield* Effect.promise(() => groupAlive(gatewayPid))).toBe(true)
        expect((yield* item()).state).toBe("running")

        // 2. Worker B takes the item over after the lease and converges it once.
        startWorker()
        const done = yield* expectConvergedOnce(call, until, { ns, agentId: agent.id, revisionId: revision.id })
        // The gateway was adopted, not started twice: one gateway process, the same pid.
        expect(yield* Effect.promise(() => gatewayProcesses(dataDir, stateDir).then(gatewayRoots))).toEqual([gatewayPid])
        expect((yield* readRecord(recordFile))?.pid).toBe(gatewayPid)

        // 3. The gateway (with its helpers) and worker B die; worker C's sweep at start brings it back.
        for (const { pid } of yield* Effect.promise(() => gatewayProcesses(dataDir, stateDir))) process.kill(pid, "SIGKILL")
        yield* until(Effect.promise(() => gatewayProcesses(dataDir, stateDir)), (left) => left.length === 0, 30, "gateway gone")
        yield* kill(workers[1]!)
        const workerC = startWorker()
        const recovered = yield* until(
          Effect.zip(readRecord(recordFile), Effect.promise(() => gatewayProcesses(dataDir, stateDir).then(gatewayRoots))),
          ([record, groups]) => record !== undefined && record.pid !== gatewayPid && groups.length === 1 && groups[0] === record.pid,
          120,
          "gateway restarted by recovery"
        )
        expect(recovered[0]!.revisionId).toBe(revision.id)
        const recover = yield* until(
          sql<{ state: string }>`SELECT state FROM work_items WHERE kind = 'agent.recover' AND key = ${agent.id} ORDER BY created_at DESC LIMIT 1`,
          (rows) => rows[0]?.state === "succeeded",
          { progress: workItemProgress(agent.id) },
          "agent.recover succeeded"
        )
        expect(recover).toEqual([{ state: "succeeded" }])
        // Recovery never touches the revision, the deployment or the activation trail.
        expect(expectData(yield* call("GET", `${agentPath}/deployments/${revision.id}`), 200)).toEqual(done)
        expect(yield* activations(agent.id)).toEqual([{ revision_id: revision.id }])
        expect(expectData(yield* call("GET", agentPath), 200).activeRevisionId).toBe(revision.id)
        expect(yield* Effect.promise(() => gatewayProcesses(dataDir, stateDir).then(gatewayRoots))).toEqual([recovered[0]!.pid])

        // 4. Stop: no process of the Agent's gateway is left (helpers included).
        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, { progress: workItemProgress(agent.id) }, "stopped")
        expect(yield* Effect.promise(() => groupAlive(recovered[0]!.pid))).toBe(false)
        yield* until(Effect.promise(() => gatewayProcesses(dataDir, stateDir)), (left) => left.length === 0, 15, "no gateway helper left")
        const exit = yield* Effect.promise(() => workerC.stop("SIGTERM"))
        expect(exit.code).toBe(0)
      }), 20 * 60_000)
  })
})
