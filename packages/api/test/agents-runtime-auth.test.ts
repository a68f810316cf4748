/**
 * `runtime` harness authentication end to end (SPEC 2.5): the operator keeps the model
 * credential in the host environment and names it in `SVC_GATEWAY_HOST_ENV`; the service stores
 * and delivers nothing, runs no model probe, and the gateway still answers through the fake
 * model with that credential. One real gateway.
 */
import { afterAll, beforeAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import type { NamespaceId } from "@svc/core/schema"
import { WorkerLive } from "@svc/worker"
import { Duration, Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { until } from "../../../testing/poll.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { apiTestLayerWith, expectData, seedAdmin, send } from "./support/iamServer.js"

const HOST_KEY = "sk-host-env-7d3a1f9b"
const VARIABLE = "FAKE_HOST_MODEL_KEY"
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-runtime-auth-"))

let fake: FakeModelServer

beforeAll(async () => {
  process.env[VARIABLE] = HOST_KEY
  fake = await startFakeModelServer({ apiKey: HOST_KEY })
}, 60_000)

afterAll(async () => {
  delete process.env[VARIABLE]
  await fake?.close()
  await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

const processConfig = { dataDir, runtimeDir: testRuntimeRoot(), gatewayHostEnvironment: [VARIABLE, "FAKE_UNSET_VARIABLE"] }

const layer = WorkerLive({ pollInterval: Duration.millis(200) }).pipe(
  Layer.provide(Compute.layerFromConfiguration),
  Layer.provideMerge(apiTestLayerWith(Compute.layerFromConfiguration)),
  Layer.provideMerge(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provideMerge(Layer.succeed(ProcessConfiguration, processConfig as unknown as LoadedProcessConfig)),
  Layer.provideMerge(LogCapture.layer)
)

describe("runtime harness authentication on a real gateway", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("the host's credential reaches the gateway only; nothing is stored or probed", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("runtime-auth@example.com")
        const call = (method: string, p: string, body?: unknown) => send(baseUrl, method, p, admin.headers, body)
        const ns = expectData(yield* call("POST", "/namespaces", { name: "runtime-auth" }), 201).id as string
        yield* until(call("GET", `/namespaces/${ns}`), (r) => r.body.data?.status === "ready", 60)
        const configuration = expectData(yield* call("POST", `/namespaces/${ns}/configurations`, {
          kind: "agent",
          values: {
            models: {
              providers: {
                fake: {
                  baseUrl: fake.baseUrl,
                  api: "openai-completions",
                  apiKey: { source: "env", provider: "default", id: VARIABLE },
                  models: [{ id: fake.model, name: "Fake" }]
                }
              }
            },
            agents: { defaults: { model: `fake/${fake.model}` } }
          }
        }), 201)
        const agent = expectData(yield* call("POST", `/namespaces/${ns}/agents`, {
          name: "host-bot",
          configurationId: configuration.id,
          harnessAuth: { method: "runtime" }
        }), 201)
        const agentPath = `/namespaces/${ns}/agents/${agent.id}`
        const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expect(revision.harness).toEqual({ id: "openclaw", mode: "embedded", auth: { method: "runtime" } })
        const done = yield* until(call("GET", `${agentPath}/deployments/${revision.id}`), (r) =>
          r.body.data?.status === "succeeded" || r.body.data?.status === "failed")
        expect(done.body.data.status).toBe("succeeded")
        // No model probe ran: the deployment made no model request.
        expect(fake.requests().filter((r) => r.path === "/v1/chat/completions")).toEqual([])

        const local = Compute.makeLocalCompute(dataDir, { runtimeRoot: testRuntimeRoot() })
        const endpoint = yield* local.privateEndpoint({ namespaceId: ns as NamespaceId, agentId: agent.id, revisionId: revision.id })
        const answer = yield* Effect.promise(async () => {
          const response = await fetch(`${endpoint.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${endpoint.token}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: "hello" }] })
          })
          return { status: response.status, body: (await response.json()) as { choices: Array<{ message: { content: string } }> } }
        })
        expect(answer.status).toBe(200)
        expect(answer.body.choices[0]!.message.content).toBe(fake.reply)
        expect(fake.requests().some((r) => r.path === "/v1/chat/completions" && r.authorized)).toBe(true)
        // Only the named variable crossed; an unset name is simply absent.
        const record = JSON.parse(yield* Effect.promise(() =>
          fs.readFile(path.join(Compute.namespaceDirectory(dataDir, ns), "agents", agent.id, "gateway.json"), "utf8"))) as { pid: number }
        const environ = (yield* Effect.promise(() => fs.readFile(`/proc/${record.pid}/environ`, "utf8"))).split("\0")
        expect(environ).toContain(`${VARIABLE}=${HOST_KEY}`)
        expect(environ.some((entry) => entry.startsWith("FAKE_UNSET_VARIABLE=") || entry.startsWith("MODEL_API_KEY="))).toBe(false)

        // Diagnostics follow the active revision's binding, not the draft's: a draft changed to
        // api_key since the deployment still runs no model probe against this gateway.
        const secret = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "later-key", value: "sk-later-key" }), 201)
        const apiKey = { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secret.id } }
        expectData(yield* call("PATCH", agentPath, { configurationId: configuration.id, harnessAuth: apiKey }), 200)
        const modelRequests = fake.requests().length
        const diagnostics = expectData(yield* call("POST", `${agentPath}/deployments/${revision.id}/diagnostics`), 200)
        expect(diagnostics.checks.some((c: { component: string }) => c.component === "model")).toBe(false)
        expect(fake.requests().length).toBe(modelRequests)

        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 120)

        // The credential is nowhere the service keeps anything.
        const logs = yield* LogCapture
        const stored = yield* sql<{ row: string }>`
          SELECT row_to_json(a)::text AS row FROM audit_events a
          UNION ALL SELECT snapshot::text FROM agent_revisions
          UNION ALL SELECT row_to_json(w)::text FROM work_items w
        `
        for (const haystack of [...logs.entries.map((e) => JSON.stringify(e)), ...stored.map((r) => r.row)]) {
          expect(haystack.includes(HOST_KEY)).toBe(false)
        }
      }), 20 * 60_000)
  })
})
