/**
 * Plugins on a real gateway (DESIGN §15, SPEC 2.7): the real API and worker with the `local`
 * Compute Driver and the `bundled` Plugin Driver, whose registry is a loopback one serving the
 * vendored, integrity-pinned tarballs. What is loaded is read from the running gateway itself:
 * its WebSocket RPC `plugins.list` (`testing/gatewayRpc.ts`) reports each plugin's configured
 * enablement and runtime state.
 *
 * 1. One plugin's download does not match its integrity and one has no credential: both are
 *    warnings of a succeeded deployment, and the running gateway shows only the third plugin
 *    (Synology Chat, its token delivered by a Secret binding), `active` from gateway start.
 * 2. The real bytes: the web-search plugin is installed and enabled in the gateway (it declares
 *    no startup activation, so OpenClaw 2026.9.6 imports it on first use and reports it
 *    `unloaded` until then; the runtime's own inventory, `openclaw plugins list --json` over the
 *    Agent's rendered configuration, shows that it loads), its disabled tool denied.
 * 3. A later deployment installs from the host cache with the registry down.
 */
import { afterAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { defaultInstallationConfig, type InstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { catalogEntry } from "@svc/core/drivers/plugin"
import type { NamespaceId } from "@svc/core/schema"
import { WorkerLive } from "@svc/worker"
import { Duration, Effect, Layer } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { configuredPlugins } from "../../../testing/gatewayRpc.js"
import { startPluginRegistry } from "../../../testing/pluginRegistry.js"
import { until } from "../../../testing/poll.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { apiTestLayerWith, expectData, seedAdmin, send } from "./support/iamServer.js"
import { letAgentUseSecret } from "./support/modelAgent.js"

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-plugins-e2e-"))
const registry = await startPluginRegistry()

afterAll(async () => {
  await registry.close()
  await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

const installation: InstallationConfig = {
  ...defaultInstallationConfig,
  drivers: { ...defaultInstallationConfig.drivers, plugin: { id: "bundled", registry: registry.url } }
}

const layer = WorkerLive({ pollInterval: Duration.millis(200) }).pipe(
  Layer.provide(Compute.layerFromConfiguration),
  Layer.provideMerge(apiTestLayerWith(Compute.layerFromConfiguration, installation)),
  Layer.provideMerge(Layer.succeed(InstallationConfiguration, installation)),
  Layer.provideMerge(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: testRuntimeRoot() } as unknown as LoadedProcessConfig)),
  Layer.provideMerge(LogCapture.layer)
)

const run = promisify(execFile)
const WEB_SEARCH = "bundled:openclaw-web-search"
const SYNOLOGY = "bundled:synology-chat"
const TARBALL = "/@ollama/openclaw-web-search/-/openclaw-web-search-0.2.2.tgz"
const SYNOLOGY_TARBALL = "/@openclaw/synology-chat/-/synology-chat-2026.9.4.tgz"
/** The host cache's directory of a catalog entry (`install.ts`: the integrity's digest in hex). */
const cacheDirectory = (id: string) =>
  Buffer.from(catalogEntry(id)!.integrity.replace(/^sha512-/, ""), "base64").toString("hex")

describe("plugins on a real gateway", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("install failures and missing credentials warn on a succeeded deployment; an installed plugin is loaded and gated", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("plugins-e2e@example.com")
        const call = (method: string, p: string, body?: unknown) => send(baseUrl, method, p, admin.headers, body)
        const ns = expectData(yield* call("POST", "/namespaces", { name: "plugins-e2e" }), 201).id as string
        yield* until(call("GET", `/namespaces/${ns}`), (r) => r.body.data?.status === "ready", 60)
        // Synology Chat's credential: a Secret delivered as its variable, usable by the Agent.
        const token = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "synology-token", value: "synology-outgoing-token-4f1c" }), 201)
        const configuration = expectData(yield* call("POST", `/namespaces/${ns}/configurations`, {
          kind: "agent",
          values: {},
          secretBindings: { SYNOLOGY_CHAT_TOKEN: { source: { kind: "secret", namespaceId: ns, id: token.id } } }
        }), 201)
        const agent = expectData(yield* call("POST", `/namespaces/${ns}/agents`, {
          name: "plugged",
          configurationId: configuration.id,
          harnessAuth: { method: "runtime" },
          plugins: {
            [WEB_SEARCH]: { enabled: true, tools: { ollama_web_fetch: { enabled: false } } },
            "bundled:zalo": { enabled: true },
            [SYNOLOGY]: { enabled: true }
          }
        }), 201)
        yield* letAgentUseSecret(call, { ns, agent, secretId: token.id, roleName: "use-synology-token" })
        const agentPath = `/namespaces/${ns}/agents/${agent.id}`
        const deploy = Effect.gen(function* () {
          const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
          const done = yield* until(call("GET", `${agentPath}/deployments/${revision.id}`), (r) =>
            r.body.data?.status === "succeeded" || r.body.data?.status === "failed")
          return { revision, status: done.body.data }
        })
        const agentDir = path.join(Compute.namespaceDirectory(dataDir, ns), "agents", agent.id)
        const compute = Compute.makeLocalCompute(dataDir, { runtimeRoot: testRuntimeRoot() })
        const ref = (revisionId: string) => ({ namespaceId: ns as NamespaceId, agentId: agent.id, revisionId })
        const health = (revisionId: string) => compute.gatewayHealth(ref(revisionId))
        /**
         * What the running gateway reports through its own RPC, by plugin id, once Synology Chat
         * (imported at gateway start) is no longer `unloaded`: a busy host may still be importing.
         */
        const gatewayPlugins = (revisionId: string) =>
          until(
            Effect.gen(function* () {
              const listed = yield* configuredPlugins(yield* compute.privateEndpoint(ref(revisionId)))
              return Object.fromEntries(listed.map((p) => [p.id, { enabled: p.enabled, version: p.version, runtime: p.runtime.state }]))
            }),
            (plugins) => plugins["synology-chat"]?.runtime !== "unloaded",
            120
          )
        const synologyActive = { enabled: true, version: "2026.9.4", runtime: "active" }
        /** The runtime's own inventory of the Agent's rendered configuration (a scratch state dir). */
        const inventory = Effect.promise(async () => {
          const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "svc-plugins-inventory-"))
          try {
            const runtime = Compute.runtimePaths(testRuntimeRoot())
            const { stdout } = await run(runtime.node, [runtime.entry, "plugins", "list", "--json"], {
              env: { PATH: process.env.PATH, HOME: scratch, OPENCLAW_STATE_DIR: scratch, OPENCLAW_CONFIG_PATH: path.join(agentDir, "openclaw.json") },
              maxBuffer: 64 * 1024 * 1024
            })
            const listed = JSON.parse(stdout.slice(stdout.indexOf("{"))) as { plugins: Array<Record<string, unknown>> }
            return listed.plugins.filter((p) => p.origin === "config")
          } finally {
            await fs.rm(scratch, { recursive: true, force: true })
          }
        })
        const tarballRequests = (tarball: string) => registry.requests().filter((p) => p === tarball).length

        // 1. The registry serves altered web-search bytes: the integrity check refuses them.
        registry.modes.set("openclaw-web-search-0.2.2.tgz", "corrupt")
        const first = yield* deploy
        expect(first.status).toMatchObject({ status: "succeeded", error: null })
        expect(first.status.warnings).toEqual([
          { code: "PLUGIN_INSTALL_FAILED", pluginId: WEB_SEARCH },
          { code: "PLUGIN_AUTH_REQUIRED", pluginId: "bundled:zalo" }
        ])
        expect(yield* health(first.revision.id)).toBe("healthy")
        // The running gateway: neither warned plugin is there; Synology Chat is active.
        expect(yield* gatewayPlugins(first.revision.id)).toEqual({ "synology-chat": synologyActive })
        expect(tarballRequests(TARBALL)).toBe(1)
        expect(tarballRequests(SYNOLOGY_TARBALL)).toBe(1)
        // Nothing the check refused was kept: the cache holds Synology Chat only.
        expect(yield* Effect.promise(() => fs.readdir(path.join(dataDir, "plugins")))).toEqual([cacheDirectory(SYNOLOGY)])

        // 2. The real bytes: installed, enabled in the gateway, its disabled tool gated.
        registry.modes.clear()
        const second = yield* deploy
        expect(second.status).toMatchObject({ status: "succeeded", error: null })
        expect(second.status.warnings).toEqual([{ code: "PLUGIN_AUTH_REQUIRED", pluginId: "bundled:zalo" }])
        expect(yield* health(second.revision.id)).toBe("healthy")
        expect(yield* gatewayPlugins(second.revision.id)).toEqual({
          "openclaw-web-search": { enabled: true, version: "0.2.2", runtime: "unloaded" },
          "synology-chat": synologyActive
        })
        const pluginDir = (id: string) => path.join(agentDir, "plugins", id)
        expect(yield* inventory).toEqual(expect.arrayContaining([
          expect.objectContaining({ id: "openclaw-web-search", version: "0.2.2", rootDir: pluginDir("openclaw-web-search"), enabled: true, status: "loaded" }),
          expect.objectContaining({ id: "synology-chat", version: "2026.9.4", rootDir: pluginDir("synology-chat"), enabled: true, status: "loaded" })
        ]))
        const rendered = JSON.parse(yield* Effect.promise(() => fs.readFile(path.join(agentDir, "openclaw.json"), "utf8")))
        expect([...rendered.plugins.load.paths].sort()).toEqual([pluginDir("openclaw-web-search"), pluginDir("synology-chat")])
        expect(rendered.plugins.entries["openclaw-web-search"]).toEqual({ enabled: true, hooks: {} })
        expect(rendered.plugins.entries["synology-chat"]).toEqual({ enabled: true, hooks: {} })
        expect(rendered.plugins.entries).not.toHaveProperty("zalo")
        expect(rendered.tools.deny).toEqual(["ollama_web_fetch"])
        expect(JSON.stringify(rendered)).not.toContain("synology-outgoing-token-4f1c")
        expect(tarballRequests(TARBALL)).toBe(2)
        expect(tarballRequests(SYNOLOGY_TARBALL)).toBe(1)

        // 3. Cached per host: the registry is not asked again, even when it is down.
        registry.mode = "unavailable"
        const third = yield* deploy
        expect(third.status.warnings).toEqual([{ code: "PLUGIN_AUTH_REQUIRED", pluginId: "bundled:zalo" }])
        expect(yield* health(third.revision.id)).toBe("healthy")
        expect((yield* gatewayPlugins(third.revision.id))["synology-chat"]).toEqual(synologyActive)
        expect(tarballRequests(TARBALL)).toBe(2)
        expect(tarballRequests(SYNOLOGY_TARBALL)).toBe(1)

        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 120)
      }), 20 * 60_000)
  })
})
