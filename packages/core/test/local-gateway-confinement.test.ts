/**
 * Gateway confinement on a real OpenClaw gateway (DESIGN §17), as root (what CI runs): two
 * Agents' gateways run; a process started exactly as a gateway is (same launcher, user and
 * sandbox) tries to reach the other Agent, the service's keys, PostgreSQL's files and the other
 * gateway's environment, and fails every time; the Agent still answers through the fake model.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { chatThroughGateway, type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"

const KEY = "sk-confine-7f3a10"
const BETA_SECRET = "beta-secret-value-5c2e"
const GATEWAY_TIMEOUT = 300_000
const isRoot = process.getuid?.() === 0

let fake: FakeModelServer
let dataDir: string
let driver: Compute.ComputeDriverShape
const namespaceId = NamespaceId.make()
const ref = (agentId: string) => ({ namespaceId, agentId, revisionId: "rev_1" })
const layoutOf = (agentId: string) => Compute.agentLayout(Compute.namespaceDirectory(dataDir, namespaceId), agentId)

/** The service's own files, as `svc start` keeps them (owner-only). */
const SERVICE_FILES = ["secret-key", "auth-secret", "bootstrap-key.json", "dev-admin-password", "postgres/pg-password", "postgres/pg/PG_VERSION"]

const spec = (agentId: string, env: Record<string, string>): Compute.GatewaySpec => ({
  ...ref(agentId),
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
  env: Object.fromEntries(Object.entries({ FAKE_MODEL_KEY: KEY, ...env }).map(([name, value]) => [name, Redacted.make(value)]))
})

const recordOf = async (agentId: string) =>
  JSON.parse(await fs.readFile(layoutOf(agentId).processFile, "utf8")) as { pid: number; port: number; token: string }

/** Runs `script` with `sh` exactly as the Agent's gateway is launched: its user, its sandbox. */
const asGateway = async (agentId: string, script: string) => {
  const layout = layoutOf(agentId)
  const confinement = await Compute.detectConfinement()
  const user = await Compute.lookupGatewayUser(Compute.gatewayUserName(layout.root))
  const launch = await Compute.launchCommand(
    confinement,
    { runtimeDirectory: Compute.runtimePaths(testRuntimeRoot()).directory, agentRoot: layout.root, workspace: layout.workspace, user },
    ["/bin/sh", "-c", script]
  )
  return new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
    const child = spawn(launch.command, [...launch.args], {
      cwd: layout.workspace,
      env: { PATH: "/usr/bin:/bin", HOME: layout.home, TMPDIR: layout.tmp },
      stdio: ["ignore", "pipe", "ignore"]
    })
    let stdout = ""
    child.stdout.on("data", (chunk) => (stdout += String(chunk)))
    child.once("error", reject)
    child.once("exit", (code) => resolve({ code, stdout }))
  })
}

/** The processes of a gateway's process group with their uid and name. */
const groupProcesses = async (pgid: number) => {
  const found: Array<{ pid: number; uid: number; name: string }> = []
  for (const entry of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const status = await fs.readFile(`/proc/${entry}/status`, "utf8").catch(() => "")
    const stat = await fs.readFile(`/proc/${entry}/stat`, "utf8").catch(() => "")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) !== pgid) continue
    found.push({
      pid: Number(entry),
      uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
      name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? ""
    })
  }
  return found
}

beforeAll(async () => {
  if (!isRoot) return
  await ensureTestRuntime()
  fake = await startFakeModelServer({ apiKey: KEY })
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-confine-"))
  for (const file of SERVICE_FILES) {
    await fs.mkdir(path.dirname(path.join(dataDir, file)), { recursive: true, mode: 0o700 })
    await fs.writeFile(path.join(dataDir, file), `service-private ${file}\n`, { mode: 0o600 })
  }
  driver = Compute.makeLocalCompute(dataDir, { runtimeRoot: testRuntimeRoot(), readinessTimeout: Duration.minutes(3) })
  await Effect.runPromise(driver.provisionNamespace({ id: namespaceId }))
}, 20 * 60_000)

afterAll(async () => {
  if (!isRoot) return
  for (const agentId of ["alpha", "beta"]) {
    await Effect.runPromise(Effect.either(driver.deleteGateway(ref(agentId))))
  }
  await fake?.close()
  if (dataDir !== undefined) await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

if (isRoot) {
  describe("gateway confinement on a real OpenClaw gateway (service runs as root)", () => {
    it.live("a gateway's user reaches neither another Agent, nor the service's files, nor another gateway's environment", () =>
      Effect.gen(function* () {
        yield* driver.startGateway({ ...spec("alpha", {}), modelProbe: {} })
        yield* driver.startGateway(spec("beta", { BETA_SECRET }))
        yield* driver.writeWorkspaceFile(ref("beta"), "USER.md", new TextEncoder().encode(`${BETA_SECRET}\n`))
        const alpha = yield* Effect.promise(() => recordOf("alpha"))
        const beta = yield* Effect.promise(() => recordOf("beta"))
        const alphaUser = yield* Effect.promise(() => Compute.lookupGatewayUser(Compute.gatewayUserName(layoutOf("alpha").root)))
        const betaUser = yield* Effect.promise(() => Compute.lookupGatewayUser(Compute.gatewayUserName(layoutOf("beta").root)))
        expect(alphaUser?.uid).toBeGreaterThan(0)
        expect(betaUser?.uid).toBeGreaterThan(0)
        expect(alphaUser?.uid).not.toBe(betaUser?.uid)

        // Every process of the gateway but its launcher runs as the Agent's user, never as root.
        const processes = yield* Effect.promise(() => groupProcesses(alpha.pid))
        const gatewayProcesses = processes.filter((p) => !["bwrap", "unshare"].includes(p.name))
        expect(gatewayProcesses.length).toBeGreaterThan(0)
        expect(gatewayProcesses.every((p) => p.uid === alphaUser!.uid)).toBe(true)
        const betaGateway = (yield* Effect.promise(() => groupProcesses(beta.pid))).find((p) => p.uid === betaUser!.uid)
        expect(betaGateway).toBeDefined()

        // The gateway's identity inside its confinement.
        const id = yield* Effect.promise(() => asGateway("alpha", "id -u"))
        expect(id).toEqual({ code: 0, stdout: `${alphaUser!.uid}\n` })

        // What it must not reach: each attempt fails and shows nothing.
        const betaLayout = layoutOf("beta")
        const attempts = [
          `cat ${path.join(betaLayout.workspace, "USER.md")}`,
          `ls ${betaLayout.state}`,
          `cat ${betaLayout.configFile}`,
          `cat ${betaLayout.processFile}`,
          `cat ${layoutOf("alpha").processFile}`,
          `ls ${dataDir}`,
          ...SERVICE_FILES.map((file) => `cat ${path.join(dataDir, file)}`),
          `cat /proc/${beta.pid}/environ`,
          `cat /proc/${betaGateway!.pid}/environ`,
          `touch ${path.join(Compute.runtimePaths(testRuntimeRoot()).directory, "planted")}`
        ]
        const results = yield* Effect.promise(() =>
          Promise.all(attempts.map(async (script) => ({ script, ...(await asGateway("alpha", `${script} 2>/dev/null`)) })))
        )
        expect(results.filter((r) => r.code === 0 || r.stdout !== "").map((r) => r.script)).toEqual([])

        // No other process is visible at all: only the sandbox's own.
        const visible = yield* Effect.promise(() => asGateway("alpha", "ls /proc | grep -c '^[0-9]'"))
        expect(Number(visible.stdout.trim())).toBeLessThan(10)

        // The Agent still works: a chat completion through its gateway, answered by the fake model.
        const answer = yield* Effect.promise(() => chatThroughGateway({ url: `http://127.0.0.1:${alpha.port}`, token: alpha.token }))
        expect(answer.status).toBe(200)
        expect(answer.body.choices[0]!.message.content).toBe(fake.reply)

        // Teardown removes the Agent's user with its files.
        yield* driver.deleteGateway(ref("beta"))
        expect(yield* Effect.promise(() => Compute.lookupGatewayUser(betaUser!.name))).toBeUndefined()
      }), GATEWAY_TIMEOUT)
  })
} else {
  // Without root nothing confines a gateway; the driver must say so rather than pretend.
  describe("gateway confinement without root", () => {
    it.effect("is the shared user, described as such for the log and GET /installation", () =>
      Effect.promise(async () => {
        const confinement = await Compute.detectConfinement()
        expect(confinement).toEqual({ kind: "shared-user" })
        expect(Compute.confinementCheck(confinement).status).toBe("warn")
      }))
  })
}
