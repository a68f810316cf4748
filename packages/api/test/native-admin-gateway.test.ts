/**
 * The native admin proxy on a real OpenClaw gateway (SPEC 5.8), the one happy path that needs
 * one: the real API with native admin on and the real worker with the `local` Compute Driver
 * deploy an Agent; its Control UI root is then fetched through the proxy with the Agent's Host,
 * and its WebSocket opened as the Control UI does, without the gateway token.
 * (Header stripping is asserted against a recording server in native-admin.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { AuthSettings, nativeAdminPipeline } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { WorkerLive } from "@svc/worker"
import { Duration, Effect, Layer, Redacted } from "effect"
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { until, workItemProgress } from "../../../testing/poll.js"
import { ensureTestRuntime, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { bindInstallationAdmin, createAccount, signedInSession } from "../../../testing/identity.js"
import { serveForTest, TestServer } from "../../../testing/server.js"
import { expectData, send } from "./support/iamServer.js"
import { setUpModelAgent } from "./support/modelAgent.js"
import { WebSocket } from "ws"
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
  Layer.provide(Compute.layerFromConfiguration),
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provide(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: testRuntimeRoot() } as unknown as LoadedProcessConfig)),
  Layer.provideMerge(api),
  Layer.provideMerge(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) }))
)

/**
 * What the Control UI does in a browser, without the gateway token: waits for the gateway's
 * `connect.challenge`, signs it with a fresh Ed25519 device key (v3 payload, no token: the
 * browser has none; on a reconnect, over the device token the gateway issued) and sends
 * `connect`; resolves with the gateway's answer to it. The browser also offers a password of
 * its own, which the proxy must replace. One device key for the whole test, as one browser.
 */
const browserDevice = generateKeyPairSync("ed25519")

const controlUiConnect = (
  baseUrl: string,
  host: string,
  cookie: string,
  options: { buildId?: string; deviceToken?: string; after?: ReadonlyArray<Record<string, unknown>> } = {}
) =>
  Effect.async<Record<string, any>>((resume) => {
    const { buildId, deviceToken, after = [] } = options
    // With `after`: those requests follow a successful connect; resolves with every answer by id.
    const answers: Record<string, any> = {}
    const { publicKey, privateKey } = browserDevice
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32)
    const deviceId = createHash("sha256").update(raw).digest("hex")
    const client = { id: "openclaw-control-ui", version: "test", platform: "test", mode: "webchat", ...(buildId === undefined ? {} : { buildId }) }
    const scopes = ["operator.read"]
    const socket = new WebSocket(`ws://127.0.0.1:${new URL(baseUrl).port}/`, { headers: { host, cookie, origin: `http://${host}` } })
    const finish = (value: Record<string, any>) => {
      socket.terminate()
      resume(Effect.succeed(value))
    }
    socket.on("unexpected-response", (_request, response) => finish({ status: response.statusCode }))
    socket.on("error", (error) => finish({ error: String(error) }))
    socket.on("close", (code, reason) => finish({ closed: code, reason: String(reason) }))
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as Record<string, any>
      if (frame["type"] === "event" && frame["event"] === "connect.challenge") {
        const { nonce, ts } = frame["payload"] as { nonce: string; ts: number }
        const payload = ["v3", deviceId, client.id, client.mode, "operator", scopes.join(","), String(ts), deviceToken ?? "", nonce, "test", ""].join("|")
        const signature = sign(null, Buffer.from(payload, "utf8"), privateKey).toString("base64url")
        socket.send(JSON.stringify({
          type: "req", id: "c1", method: "connect",
          params: {
            minProtocol: 4, maxProtocol: 4, client, role: "operator", scopes, caps: [],
            auth: { password: "browser-guess", ...(deviceToken === undefined ? {} : { deviceToken }) },
            device: { id: deviceId, publicKey: raw.toString("base64url"), signature, signedAt: ts, nonce }
          }
        }))
      } else if (frame["type"] === "res" && frame["id"] === "c1") {
        if (after.length === 0 || frame["ok"] !== true) finish(frame)
        else for (const request of after) socket.send(JSON.stringify(request))
      } else if (frame["type"] === "res") {
        answers[String(frame["id"])] = frame
        if (Object.keys(answers).length === after.length) finish(answers)
      }
    })
  })

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
          (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed",
          { progress: workItemProgress(revision.id) }
        )
        expect(done.body.data.status).toBe("succeeded")

        const page = yield* hostRequest(baseUrl, { host, headers: { cookie: sharedCookie(token), accept: "text/html" } })
        expect(page.status).toBe(200)
        expect(page.headers["content-type"]).toMatch(/^text\/html/)
        expect(page.text.toLowerCase()).toContain("<html")
        expect(page.headers["set-cookie"]).toBeUndefined()
        // The Control UI's WebSocket: the gateway accepts the browser's connect request with the
        // token the proxy put in, never shown to the browser.
        // A Control UI names the gateway build it was served by (the page embeds it); a stale
        // one is asked to reload, which this test uses to learn the build.
        const stale = yield* controlUiConnect(baseUrl, host, sharedCookie(token))
        expect(stale).toMatchObject({ ok: false, error: { details: { code: "PROTOCOL_MISMATCH", gatewayBuildId: expect.any(String) } } })
        const buildId = stale["error"].details.gatewayBuildId as string
        const hello = yield* controlUiConnect(baseUrl, host, sharedCookie(token), { buildId })
        expect(hello).toMatchObject({ type: "res", ok: true, payload: { type: "hello-ok", auth: { role: "operator" } } })
        // A reconnect with the device token the gateway issued (which the device proof covers).
        const deviceToken = hello["payload"].auth.deviceToken as string
        expect(deviceToken).toEqual(expect.any(String))
        const again = yield* controlUiConnect(baseUrl, host, sharedCookie(token), { buildId, deviceToken })
        expect(again).toMatchObject({ type: "res", ok: true, payload: { type: "hello-ok" } })

        // The browser cannot rewrite the gateway's configuration: the relay answers config.patch
        // itself (same id, FORBIDDEN) and the gateway never sees it; a read still reaches it.
        const answers = yield* controlUiConnect(baseUrl, host, sharedCookie(token), {
          buildId,
          deviceToken,
          after: [
            { type: "req", id: "p1", method: "config.patch", params: { raw: "{ tools: { exec: { security: \"full\" } } }", baseHash: "x" } },
            { type: "req", id: "g1", method: "config.get", params: {} }
          ]
        })
        expect(answers["p1"]).toMatchObject({ type: "res", id: "p1", ok: false, error: { code: "FORBIDDEN", message: expect.stringContaining("control plane") } })
        expect(answers["g1"]).toMatchObject({ type: "res", id: "g1" })
        expect(JSON.stringify(answers["g1"])).not.toContain("control plane")

        // Without the session the same host is refused before the gateway is reached.
        expect((yield* hostRequest(baseUrl, { host })).status).toBe(401)

        // Stop, so no gateway outlives the test.
        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, { progress: workItemProgress(agent.id) })
        expect((yield* hostRequest(baseUrl, { host, headers: { cookie: sharedCookie(token) } })).status).toBe(409)
      }), 20 * 60_000)
  })
})
