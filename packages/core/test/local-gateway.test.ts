/**
 * The `local` Compute Driver's Agent half against a real OpenClaw gateway (a child process of
 * about 1 GiB, ready in 15-45 s) answered by a fake model server on loopback. Serial and few on
 * purpose. The runtime is installed by the test itself, into a directory reused across runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { ensureTestRuntime, groupAlive, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"

const GOOD_KEY = "sk-fake-good-0123456789"
const GATEWAY_TIMEOUT = 300_000

let fake: FakeModelServer
let dataDir: string
let driver: Compute.ComputeDriverShape
const namespaceId = NamespaceId.make()

const options = () => ({ runtimeRoot: testRuntimeRoot(), readinessTimeout: Duration.minutes(3) })

/** A Configuration `values` document: the fake model server as the default model. */
const values = (extra: Record<string, unknown> = {}) => ({
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
  agents: { defaults: { model: `fake/${fake.model}` } },
  // Asks for the permissive default: the driver must deny it.
  tools: { exec: { security: "full", ask: "off" } },
  ...extra
})

const spec = (agentId: string, key: string, extra: Partial<Compute.GatewaySpec> = {}): Compute.GatewaySpec => ({
  namespaceId,
  agentId,
  revisionId: "rev_1",
  values: values(),
  env: { FAKE_MODEL_KEY: Redacted.make(key) },
  ...extra
})

const recordOf = async (agentId: string) =>
  JSON.parse(
    await fs.readFile(path.join(Compute.namespaceDirectory(dataDir, namespaceId), "agents", agentId, "gateway.json"), "utf8")
  ) as { pid: number; port: number; token: string }

beforeAll(async () => {
  await ensureTestRuntime()
  fake = await startFakeModelServer({ apiKey: GOOD_KEY })
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-gateway-"))
  driver = Compute.makeLocalCompute(dataDir, options())
  await Effect.runPromise(driver.provisionNamespace({ id: namespaceId }))
}, 20 * 60_000)

afterAll(async () => {
  delete process.env.SVC_LEAK_CHECK
  for (const agentId of ["alpha", "beta", "gamma"]) {
    await Effect.runPromise(Effect.either(driver.deleteGateway({ namespaceId, agentId, revisionId: "rev_1" })))
  }
  await fake?.close()
  if (dataDir !== undefined) await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

describe("local Compute Driver with a real OpenClaw gateway", () => {
  it.live("starts a gateway that answers through the fake model; workspace files; re-adoption; stop; delete", () =>
    Effect.gen(function* () {
      process.env.SVC_LEAK_CHECK = "must-not-reach-the-gateway"
      const alpha = spec("alpha", GOOD_KEY, { modelProbe: {} })
      const ref = { namespaceId, agentId: "alpha", revisionId: "rev_1" }
      yield* driver.startGateway(alpha)
      expect(yield* driver.gatewayHealth(ref)).toBe("healthy")
      const first = yield* Effect.promise(() => recordOf("alpha"))

      // Only the allowlisted environment and the Agent's Secret reach the process.
      const environ = (yield* Effect.promise(() => fs.readFile(`/proc/${first.pid}/environ`, "utf8"))).split("\0")
      expect(environ).toContain(`FAKE_MODEL_KEY=${GOOD_KEY}`)
      expect(environ).toContain("OPENCLAW_NO_RESPAWN=1")
      expect(environ.some((entry) => entry.startsWith("SVC_") || entry.startsWith("DATABASE_URL="))).toBe(false)

      // A chat completion through the gateway, answered by the fake model server.
      const endpoint = yield* driver.privateEndpoint(ref)
      expect(endpoint).toEqual({ url: `http://127.0.0.1:${first.port}`, token: first.token })
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

      // A wrong gateway token is not a credential problem of the Agent.
      expect(yield* Compute.probeModel({ ...endpoint, token: "wrong" }))
        .toEqual({ _tag: "Failed", status: 401, reason: "gateway token rejected" })

      // Workspace files: where OpenClaw reads them; names that leave the workspace are refused.
      const content = new TextEncoder().encode("# User\nWrites tests.\n")
      yield* driver.writeWorkspaceFile(ref, "USER.md", content)
      expect(new TextDecoder().decode(yield* driver.readWorkspaceFile(ref, "USER.md"))).toBe("# User\nWrites tests.\n")
      const workspace = path.join(Compute.namespaceDirectory(dataDir, namespaceId), "agents", "alpha", "workspace")
      expect(yield* Effect.promise(() => fs.readFile(path.join(workspace, "USER.md"), "utf8"))).toBe("# User\nWrites tests.\n")
      expect(yield* Effect.flip(driver.readWorkspaceFile(ref, "../gateway.json")))
        .toMatchObject({ code: "WORKSPACE_PATH_INVALID", permanent: true })
      expect(yield* Effect.flip(driver.readWorkspaceFile(ref, "NOPE.md")))
        .toMatchObject({ code: "WORKSPACE_FILE_NOT_FOUND" })

      // A restarted worker (a new driver instance) adopts the running gateway instead of restarting it.
      const restarted = Compute.makeLocalCompute(dataDir, options())
      yield* restarted.startGateway(alpha)
      expect((yield* Effect.promise(() => recordOf("alpha"))).pid).toBe(first.pid)
      expect(yield* restarted.privateEndpoint(ref)).toEqual(endpoint)
      const diagnostics = yield* restarted.diagnostics(ref)
      expect(diagnostics.map((check) => check.status)).toEqual(["pass", "pass", "pass", "pass"])

      // Stop: the whole process group is gone; stopping again is a no-op.
      yield* restarted.stopGateway(ref)
      expect(yield* Effect.promise(() => groupAlive(first.pid))).toBe(false)
      expect(yield* restarted.gatewayHealth(ref)).toBe("stopped")
      yield* restarted.stopGateway(ref)
      expect(yield* Effect.flip(restarted.privateEndpoint(ref))).toMatchObject({ code: "GATEWAY_NOT_RUNNING" })

      // Delete: the Agent's directories go, the Namespace's stays.
      yield* restarted.deleteGateway(ref)
      expect(yield* restarted.gatewayHealth(ref)).toBe("absent")
      expect(yield* Effect.promise(() => fs.stat(workspace).then(() => true, () => false))).toBe(false)
      expect(yield* Effect.promise(() => fs.stat(Compute.namespaceDirectory(dataDir, namespaceId)).then(() => true))).toBe(true)
    }), GATEWAY_TIMEOUT)

  it.live("a credential the model provider rejects ends the start with RUNTIME_AUTHENTICATION_FAILED", () =>
    Effect.gen(function* () {
      const ref = { namespaceId, agentId: "beta", revisionId: "rev_1" }
      const failure = yield* Effect.flip(driver.startGateway(spec("beta", "sk-wrong", { modelProbe: {} })))
      expect(failure).toMatchObject({ _tag: "ComputeFailure", code: "RUNTIME_AUTHENTICATION_FAILED", permanent: true })
      expect(failure.message).not.toMatch(/Incorrect API key/)
      // The failed gateway does not keep its gigabyte.
      const record = yield* Effect.promise(() => recordOf("beta"))
      expect(yield* Effect.promise(() => groupAlive(record.pid))).toBe(false)
      expect(yield* driver.gatewayHealth(ref)).toBe("stopped")
      expect(fake.requests().some((r) => !r.authorized)).toBe(true)
    }), GATEWAY_TIMEOUT)

  it.live("a configuration OpenClaw rejects (unknown key, exit 78) fails permanently with GATEWAY_CONFIG_REJECTED", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(
        driver.startGateway({ ...spec("gamma", GOOD_KEY), values: { ...values(), notAnOpenClawKey: true } })
      )
      expect(failure).toMatchObject({ _tag: "ComputeFailure", code: "GATEWAY_CONFIG_REJECTED", permanent: true })
      expect(failure.message).not.toMatch(/notAnOpenClawKey/)
      const log = yield* Effect.promise(() =>
        fs.readFile(path.join(Compute.namespaceDirectory(dataDir, namespaceId), "agents", "gamma", "logs", "gateway.log"), "utf8")
      )
      expect(log).toMatch(/notAnOpenClawKey/)
    }), GATEWAY_TIMEOUT)

  it.live("a missing runtime is a transient RUNTIME_NOT_INSTALLED failure", () =>
    Effect.gen(function* () {
      const empty = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "svc-no-runtime-")))
      const bare = Compute.makeLocalCompute(dataDir, { runtimeRoot: empty })
      expect(yield* Effect.flip(bare.startGateway(spec("delta", GOOD_KEY))))
        .toMatchObject({ code: "RUNTIME_NOT_INSTALLED", permanent: false })
    }))
})
