/**
 * The native admin proxy on a real OpenClaw gateway (SPEC 5.8), the one happy path that needs
 * one: the real API with native admin on and the real worker with the `local` Compute Driver
 * deploy an Agent; its Control UI root is then fetched through the proxy with the Agent's Host.
 * (Header stripping is asserted against a recording server in native-admin.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { AuthSettings, nativeAdminPipeline } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { WorkerLive } from "@svc/worker"
import { Duration, Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { until } from "../../../testing/poll.js"
import { ensureTestRuntime, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { bindInstallationAdmin, createAccount, signedInSession } from "../../../testing/identity.js"
import { serveForTest, TestServer } from "../../../testing/server.js"
import { expectData, send } from "./support/iamServer.js"
import { setUpModelAgent } from "./support/modelAgent.js"
import { agentHost, CONSOLE_ORIGIN, hostRequest, NATIVE_ADMIN, settings, sharedCookie } from "./support/nativeAdminServer.js"

const MODEL_KEY = "sk-native-admin-9c41e2"
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-native-admin-"))

let fake: FakeModelServer

beforeAll(async () => {
  await ensureTestRuntime()
  fake = await startFakeModelServer({ apiKey: MODEL_KEY })
}, 20 * 60_000)

afterAll(async () => {
  await fake?.close()
  await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

const api = serveForTest(nativeAdminPipeline({ development: true, maxBodyBytes: 448 * 1024 }, NATIVE_ADMIN)).pipe(
  Layer.provide(Compute.layerLocal(dataDir, { runtimeRoot: testRuntimeRoot() })),
  Layer.provide(Layer.succeed(AuthSettings, settings)),
  Layer.provide(Layer.succeed(InstallationConfiguration, { ...defaultInstallationConfig, nativeAdmin: NATIVE_ADMIN })),
  Layer.provideMerge(migratedDatabaseLayer)
)

const layer = WorkerLive({ pollInterval: Duration.millis(200) }).pipe(
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provide(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: testRuntimeRoot() } as unknown as LoadedProcessConfig)),
  Layer.provideMerge(api),
  Layer.provideMerge(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) }))
)

describe("native admin UI through the proxy on a real gateway", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("deploy an Agent, then its Control UI answers on the Agent host with the shared session", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const account = yield* createAccount("native-admin@example.test")
        yield* bindInstallationAdmin(account.principalId)
        const token = (yield* signedInSession(account.userId)).token
        const headers = { cookie: sharedCookie(token), origin: CONSOLE_ORIGIN }
        const call = (method: string, p: string, body?: unknown) => send(baseUrl, method, p, headers, body)

        const { agent, agentPath } = yield* setUpModelAgent(call, { namespace: "native", agent: "native-bot", modelKey: MODEL_KEY, fake })
        const host = agentHost(agent.id)

        // Before any deployment: not running (409), through the same host.
        expect((yield* hostRequest(baseUrl, { host, headers: { cookie: sharedCookie(token) } })).status).toBe(409)

        const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const done = yield* until(
          call("GET", `${agentPath}/deployments/${revision.id}`),
          (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed"
        )
        expect(done.body.data.status).toBe("succeeded")

        const page = yield* hostRequest(baseUrl, { host, headers: { cookie: sharedCookie(token), accept: "text/html" } })
        expect(page.status).toBe(200)
        expect(page.headers["content-type"]).toMatch(/^text\/html/)
        expect(page.text.toLowerCase()).toContain("<html")
        expect(page.headers["set-cookie"]).toBeUndefined()
        // Without the session the same host is refused before the gateway is reached.
        expect((yield* hostRequest(baseUrl, { host })).status).toBe(401)

        // Stop, so no gateway outlives the test.
        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 120)
        expect((yield* hostRequest(baseUrl, { host, headers: { cookie: sharedCookie(token) } })).status).toBe(409)
      }), 20 * 60_000)
  })
})
