/**
 * Workspace files (SPEC 4.4) through the API on a running Agent of the `kubernetes` Compute
 * Driver: the run's shared real API server and controllers, the test node running the Pod's real
 * gateway, the files read and written over the gateway's WebSocket RPC. The same statuses and
 * codes as on `local`, audited writes, and 503 when the gateway cannot be reached.
 */
import { describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Compute from "@svc/core/drivers/compute"
import { freePort } from "@svc/core/embedded-postgres"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Layer, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startFakeGatewayRpc } from "../../../testing/fakeGatewayRpc.js"
import { until, workItemProgress } from "../../../testing/poll.js"
import { clusterOf, kubernetesDriver } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { startTestNode } from "../../../testing/kubernetes/testNode.js"
import { call as rawCall, TestServer } from "../../../testing/server.js"
import { expectData, expectError, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { kubernetesApiWorkerLayer } from "./support/kubernetesApiWorker.js"
import { gatewayFixture } from "./support/gatewayWorld.js"
import { setUpModelAgent } from "./support/modelAgent.js"

const GOOD_KEY = "sk-k8s-files-good-5b2d"
const world = await gatewayFixture("svc-k8s-files-", GOOD_KEY)
const owned = new Set<string>()
let nodeDir: string
/** When set, every gateway resolves to a loopback port nothing listens on. */
let cutOff: string | undefined

const kubernetes = Layer.scoped(
  Compute.ComputeDriver,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const state = await sharedCluster()
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-k8s-files-node-"))
      nodeDir = workDir
      const node = await startTestNode(clusterOf(state), {
        name: `node-files-${randomBytes(4).toString("hex")}`,
        workDir,
        owns: (name) => owned.has(name)
      })
      const resolver: Compute.EndpointResolver = (address) => cutOff === undefined ? node.resolver(address) : Effect.succeed(cutOff)
      return { node, workDir, driver: kubernetesDriver(state, { resolver, readinessTimeout: Duration.seconds(90), workspaceTimeout: Duration.seconds(10) }) }
    }),
    ({ node, workDir }) => Effect.promise(async () => {
      await node.stop()
      fs.rmSync(workDir, { recursive: true, force: true })
    })
  ).pipe(Effect.map(({ driver }) => driver))
)

const layer = kubernetesApiWorkerLayer(kubernetes, world.dataDir)

describe("workspace files of a kubernetes Agent through the API", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("read, write, the error statuses, and 503 when the gateway cannot be reached", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const sql = yield* SqlClient.SqlClient
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("k8s-files@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)
        const soul = "# Soul\nStaged before the first start.\n"
        const { ns, agent, agentPath } = yield* setUpModelAgent(call, {
          namespace: "k8s-files",
          agent: "files-bot",
          modelKey: GOOD_KEY,
          fake,
          initialWorkspaceFiles: { "SOUL.md": soul }
        })
        const kns = Compute.kubernetesNamespace({ id: Schema.decodeSync(NamespaceId)(ns) })
        owned.add(kns)
        const files = `${agentPath}/workspace/files`
        // Never deployed: no workspace, no file; no write.
        expectError(yield* call("GET", `${files}/SOUL.md`), 404, "NOT_FOUND")
        expectError(yield* call("PUT", `${files}/USER.md`, { content: "# User\n" }), 409, "RESOURCE_CONFLICT")

        const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202).id as string
        const done = expectData(
          yield* until(
            call("GET", `${agentPath}/deployments/${revision}`),
            (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed",
            { progress: workItemProgress(revision) }
          ),
          200
        )
        expect(done.status, JSON.stringify(done.error)).toBe("succeeded")
        const volume = path.join(nodeDir, "volumes", kns, Compute.agentObjectName(agent.id), "workspace")

        // Reads come from the Agent's volume, through the gateway.
        expect(expectData(yield* call("GET", `${files}/SOUL.md`), 200)).toEqual({ name: "SOUL.md", content: soul })
        fs.rmSync(path.join(volume, "USER.md"), { force: true })
        expectError(yield* call("GET", `${files}/USER.md`), 404, "NOT_FOUND")
        expectError(yield* call("GET", `${files}/secrets.env`), 400, "INVALID_REQUEST")
        expectError(yield* call("GET", `${files}/..%2Fopenclaw.json`), 400, "INVALID_REQUEST")

        // Writes land in the volume, are audited, and read back.
        expect(expectData(yield* call("PUT", `${files}/USER.md`, { content: "# User\nWrites tests. ✓\n" }), 200)).toEqual({ name: "USER.md", size: 25 })
        expect(fs.readFileSync(path.join(volume, "USER.md"), "utf8")).toBe("# User\nWrites tests. ✓\n")
        expect(expectData(yield* call("GET", `${files}/USER.md`), 200)).toEqual({ name: "USER.md", content: "# User\nWrites tests. ✓\n" })
        expect(expectData(yield* call("PUT", `${files}/SOUL.md`, { content: "# Soul\nEdited.\n" }), 200)).toEqual({ name: "SOUL.md", size: 15 })
        expect(fs.readFileSync(path.join(volume, "SOUL.md"), "utf8")).toBe("# Soul\nEdited.\n")
        const audited = () => sql<{ outcome: string; details: unknown }>`
          SELECT outcome, details FROM audit_events WHERE kind = 'agent.workspace-file-written' AND details->>'revisionId' = ${revision} ORDER BY id`
        expect(yield* audited()).toEqual([
          { outcome: "success", details: { name: "USER.md", size: 25, revisionId: revision } },
          { outcome: "success", details: { name: "SOUL.md", size: 15, revisionId: revision } }
        ])

        // Refused before the gateway: content and body limits, names; nothing written.
        expectError(yield* call("PUT", `${files}/USER.md`, { content: "x".repeat(16_385) }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/content" }])
        expectError(yield* call("PUT", `${files}/USER.md`, { content: "a\u0000b" }), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/content" }])
        expectError(yield* call("PUT", `${files}/NOTES.md`, { content: "x" }), 400, "INVALID_REQUEST")
        const tooLarge = yield* Effect.promise(() => rawCall(`${baseUrl}${files}/USER.md`, {
          method: "PUT",
          headers: { ...admin.headers, "content-type": "application/json" },
          body: JSON.stringify({ content: " ".repeat(49 * 1024) })
        }))
        expectError(tooLarge, 413, "PAYLOAD_TOO_LARGE")
        expect(fs.readFileSync(path.join(volume, "USER.md"), "utf8")).toBe("# User\nWrites tests. ✓\n")
        expect(fs.existsSync(path.join(volume, "NOTES.md"))).toBe(false)

        // The gateway cannot be reached: 503 for both, nothing written, nothing audited.
        cutOff = `http://127.0.0.1:${yield* Effect.promise(() => freePort())}`
        yield* Effect.gen(function* () {
          expectError(yield* call("GET", `${files}/SOUL.md`), 503, "DEPENDENCY_UNAVAILABLE")
          expectError(yield* call("PUT", `${files}/SOUL.md`, { content: "# Soul\nLost.\n" }), 503, "DEPENDENCY_UNAVAILABLE")
        }).pipe(Effect.ensuring(Effect.sync(() => { cutOff = undefined })))
        expect(fs.readFileSync(path.join(volume, "SOUL.md"), "utf8")).toBe("# Soul\nEdited.\n")
        expect(yield* audited()).toHaveLength(2)
        // A gateway that refuses the service's connect (an unpaired device): nothing sent, 503.
        // One that takes the write and drops the connection: the outcome is unknown, 503 UNKNOWN_OUTCOME.
        const refusing = yield* Effect.promise(() => startFakeGatewayRpc("refuse"))
        const dropping = yield* Effect.promise(() => startFakeGatewayRpc("drop"))
        yield* Effect.gen(function* () {
          cutOff = refusing.url
          expectError(yield* call("GET", `${files}/SOUL.md`), 503, "DEPENDENCY_UNAVAILABLE")
          expectError(yield* call("PUT", `${files}/SOUL.md`, { content: "# Soul\nRefused.\n" }), 503, "DEPENDENCY_UNAVAILABLE")
          cutOff = dropping.url
          expectError(yield* call("PUT", `${files}/SOUL.md`, { content: "# Soul\nMaybe.\n" }), 503, "UNKNOWN_OUTCOME")
          expect(dropping.received).toEqual(["agents.list", "agents.files.set"])
        }).pipe(Effect.ensuring(Effect.promise(async () => {
          cutOff = undefined
          await Promise.all([refusing.close(), dropping.close()])
        })))
        // Both failed writes are audited as failures (the gateway was healthy to the service).
        expect((yield* audited()).map((row) => row.outcome)).toEqual(["success", "success", "failure", "failure"])
        // Reachable again: served again.
        expect(expectData(yield* call("GET", `${files}/SOUL.md`), 200)).toEqual({ name: "SOUL.md", content: "# Soul\nEdited.\n" })

        // Stopping: no writes (409); stopped (no active revision), the file is not found, as on `local`.
        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        expectError(yield* call("PUT", `${files}/USER.md`, { content: "# User\n" }), 409, "RESOURCE_CONFLICT")
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 180)
        expectError(yield* call("GET", `${files}/SOUL.md`), 404, "NOT_FOUND")
        expectData(yield* call("DELETE", agentPath), 202)
        yield* until(call("GET", agentPath), (r) => r.status === 404, 180)
      }), 15 * 60_000)
  })
})
