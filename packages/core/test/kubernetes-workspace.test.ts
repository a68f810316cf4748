/**
 * Workspace files of a cluster gateway through its WebSocket RPC: the `kubernetes` driver against
 * the real API server and controllers, the test node running the Pod's real OpenClaw gateway
 * (its volume a directory this test can look into). Reads and writes with the `local` driver's
 * codes, the gateway's own refusals, and every way the gateway cannot be reached.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { freePort } from "@svc/core/embedded-postgres"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type FakeGatewayRpc, startFakeGatewayRpc } from "../../../testing/fakeGatewayRpc.js"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime } from "../../../testing/gatewayRuntime.js"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { startTestNode, type TestNode } from "../../../testing/kubernetes/testNode.js"

const GOOD_KEY = "sk-fake-good-ws-0123456789"
const SOUL = "# Soul\nStaged before the first start ✓\n"

let state: ClusterState
let node: TestNode
let fake: FakeModelServer
let workDir: string
let driver: Compute.ComputeDriverShape
const owned = new Set<string>()
const namespace = { id: NamespaceId.make() }
const agentId = "agt_files"
const ref = { namespaceId: namespace.id, agentId, revisionId: "rev_files" }

/** The Agent's workspace as the test node keeps its volume. */
const workspace = () => path.join(workDir, "volumes", Compute.kubernetesNamespace(namespace), Compute.agentObjectName(agentId), "workspace")

beforeAll(async () => {
  ;[state] = await Promise.all([sharedCluster(), ensureTestRuntime()])
  const cluster = clusterOf(state)
  fake = await startFakeModelServer({ apiKey: GOOD_KEY })
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-node-ws-"))
  owned.add(Compute.kubernetesNamespace(namespace))
  node = await startTestNode(cluster, { name: `node-ws-${namespace.id.slice(3, 11)}`, workDir, owns: (name) => owned.has(name) })
  driver = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(4) })
  await Effect.runPromise(driver.provisionNamespace(namespace))
  await Effect.runPromise(driver.startGateway({
    ...ref,
    values: {
      models: { providers: { fake: { baseUrl: fake.baseUrl, api: "openai-completions", apiKey: { source: "env", provider: "default", id: "FAKE_MODEL_KEY" }, models: [{ id: fake.model, name: "Fake" }] } } },
      agents: { defaults: { model: `fake/${fake.model}` } }
    },
    env: { FAKE_MODEL_KEY: Redacted.make(GOOD_KEY) },
    initialFiles: { "SOUL.md": SOUL }
  }))
}, 20 * 60_000)

afterAll(async () => {
  if (driver !== undefined) await Effect.runPromise(Effect.either(driver.teardownNamespace(namespace)))
  await node?.stop()
  await fake?.close()
  if (workDir !== undefined) fs.rmSync(workDir, { recursive: true, force: true })
}, 180_000)

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const bytes = (value: string) => new TextEncoder().encode(value)
const failed = (code: string, permanent: boolean) => ({ _tag: "ComputeFailure", code, permanent })
const flip = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect)

describe("kubernetes workspace files through the gateway's RPC", () => {
  it.live("reads what the volume holds, writes through the gateway, overwrites", () =>
    Effect.gen(function* () {
      expect(text(yield* driver.readWorkspaceFile(ref, "SOUL.md"))).toBe(SOUL)
      yield* driver.writeWorkspaceFile(ref, "USER.md", bytes("# User\nÜmlaut ✓\n"))
      expect(fs.readFileSync(path.join(workspace(), "USER.md"), "utf8")).toBe("# User\nÜmlaut ✓\n")
      expect(text(yield* driver.readWorkspaceFile(ref, "USER.md"))).toBe("# User\nÜmlaut ✓\n")
      yield* driver.writeWorkspaceFile(ref, "USER.md", bytes("# User\nsecond\n"))
      expect(text(yield* driver.readWorkspaceFile(ref, "USER.md"))).toBe("# User\nsecond\n")
      // Written on the volume by anyone else (the Agent itself): read as it is.
      fs.writeFileSync(path.join(workspace(), "IDENTITY.md"), "# Identity\n")
      expect(text(yield* driver.readWorkspaceFile(ref, "IDENTITY.md"))).toBe("# Identity\n")
    }), 300_000)

  it.live("a missing file, names local refuses, names the gateway refuses, links and non-UTF-8 content", () =>
    Effect.gen(function* () {
      fs.rmSync(path.join(workspace(), "AGENTS.md"), { force: true })
      expect(yield* flip(driver.readWorkspaceFile(ref, "AGENTS.md"))).toMatchObject(failed("WORKSPACE_FILE_NOT_FOUND", true))
      for (const name of ["../openclaw.json", "a/../b.md", ".hidden", ""]) {
        expect(yield* flip(driver.readWorkspaceFile(ref, name))).toMatchObject(failed("WORKSPACE_PATH_INVALID", true))
        expect(yield* flip(driver.writeWorkspaceFile(ref, name, bytes("x")))).toMatchObject(failed("WORKSPACE_PATH_INVALID", true))
      }
      // Acceptable to `local`, not one of the gateway's files: the same code, nothing written.
      expect(yield* flip(driver.readWorkspaceFile(ref, "NOTES.md"))).toMatchObject(failed("WORKSPACE_PATH_INVALID", true))
      expect(yield* flip(driver.writeWorkspaceFile(ref, "notes/NOTES.md", bytes("x")))).toMatchObject(failed("WORKSPACE_PATH_INVALID", true))
      expect(fs.existsSync(path.join(workspace(), "NOTES.md"))).toBe(false)
      expect(fs.existsSync(path.join(workspace(), "notes"))).toBe(false)
      // A symbolic link is neither followed nor replaced (as on `local`).
      fs.writeFileSync(path.join(workDir, "outside.md"), "outside\n")
      fs.symlinkSync(path.join(workDir, "outside.md"), path.join(workspace(), "AGENTS.md"))
      expect(yield* flip(driver.readWorkspaceFile(ref, "AGENTS.md"))).toMatchObject(failed("WORKSPACE_PATH_INVALID", true))
      expect(yield* flip(driver.writeWorkspaceFile(ref, "AGENTS.md", bytes("x")))).toMatchObject(failed("WORKSPACE_PATH_INVALID", true))
      expect(fs.readFileSync(path.join(workDir, "outside.md"), "utf8")).toBe("outside\n")
      fs.rmSync(path.join(workspace(), "AGENTS.md"))
      expect(yield* flip(driver.writeWorkspaceFile(ref, "AGENTS.md", new Uint8Array([0xc3, 0x28]))))
        .toMatchObject(failed("WORKSPACE_CONTENT_INVALID", true))
      expect(fs.existsSync(path.join(workspace(), "AGENTS.md"))).toBe(false)
    }), 300_000)

  it.live("no gateway for the ref: a read says so, a write is a known failure", () =>
    Effect.gen(function* () {
      const other = { ...ref, agentId: "agt_absent" }
      expect(yield* flip(driver.readWorkspaceFile(other, "SOUL.md"))).toMatchObject(failed("GATEWAY_NOT_RUNNING", false))
      expect(yield* flip(driver.writeWorkspaceFile(other, "SOUL.md", bytes("x")))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", true))
      const stale = { ...ref, revisionId: "rev_other" }
      expect(yield* flip(driver.readWorkspaceFile(stale, "SOUL.md"))).toMatchObject(failed("GATEWAY_NOT_RUNNING", false))
    }), 120_000)

  it.live("unreachable: the resolver refuses, nothing listens, no challenge, the connect is refused, the request is never answered", () =>
    Effect.gen(function* () {
      const through = (resolver: Compute.EndpointResolver) =>
        kubernetesDriver(state, { resolver, workspaceTimeout: Duration.seconds(5), pairingWait: Duration.seconds(2) })
      const refusing = through(() => Effect.fail(new Compute.ComputeFailure({ code: "GATEWAY_UNREACHABLE", message: "no endpoints", permanent: false })))
      const closedPort = yield* Effect.promise(() => freePort())
      const silent = through(() => Effect.succeed(`http://127.0.0.1:${closedPort}`))
      for (const unreachable of [refusing, silent]) {
        expect(yield* flip(unreachable.readWorkspaceFile(ref, "SOUL.md"))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", false))
        // Nothing reached the gateway: a known outcome.
        expect(yield* flip(unreachable.writeWorkspaceFile(ref, "SOUL.md", bytes("lost")))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", true))
      }
      const fakes: Array<FakeGatewayRpc> = []
      const refused = yield* Effect.promise(() => startFakeGatewayRpc("refuse"))
      const dropping = yield* Effect.promise(() => startFakeGatewayRpc("drop"))
      const mute = yield* Effect.promise(() => startFakeGatewayRpc("mute"))
      fakes.push(refused, dropping, mute)
      yield* Effect.gen(function* () {
        // No challenge within the connect timeout: nothing was sent.
        const muteDriver = through(() => Effect.succeed(mute.url))
        expect(yield* flip(muteDriver.readWorkspaceFile(ref, "SOUL.md"))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", false))
        expect(yield* flip(muteDriver.writeWorkspaceFile(ref, "SOUL.md", bytes("lost")))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", true))
        expect(mute.received).toEqual([])
        const refusedDriver = through(() => Effect.succeed(refused.url))
        expect(yield* flip(refusedDriver.readWorkspaceFile(ref, "SOUL.md"))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", false))
        expect(yield* flip(refusedDriver.writeWorkspaceFile(ref, "SOUL.md", bytes("lost")))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", true))
        expect(refused.received).toEqual([])
        // NOT_PAIRED is asked again while the pairing container may still approve (2 s here).
        expect(refused.connects).toBeGreaterThan(2)
        // The request was sent and the connection dropped: the outcome is unknown.
        const droppingDriver = through(() => Effect.succeed(dropping.url))
        expect(yield* flip(droppingDriver.writeWorkspaceFile(ref, "SOUL.md", bytes("maybe")))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", false))
        expect(yield* flip(droppingDriver.readWorkspaceFile(ref, "SOUL.md"))).toMatchObject(failed("WORKSPACE_UNAVAILABLE", false))
        expect(dropping.received).toEqual(["agents.list", "agents.files.set", "agents.list", "agents.files.get"])
      }).pipe(Effect.ensuring(Effect.promise(() => Promise.all(fakes.map((f) => f.close())))))
      // The real gateway's file is untouched by all of it.
      expect(fs.readFileSync(path.join(workspace(), "SOUL.md"), "utf8")).toBe(SOUL)
    }), 120_000)
})
