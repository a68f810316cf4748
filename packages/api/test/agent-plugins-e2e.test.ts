/**
 * Plugins on a real gateway (DESIGN §15, SPEC 2.7): the real API and worker with the `local`
 * Compute Driver and the `bundled` Plugin Driver, whose registry is a loopback one serving the
 * vendored, integrity-pinned tarball. A plugin whose download does not match its integrity, and
 * one without its credential, are warnings of a succeeded deployment; once the registry serves
 * the real bytes the next deployment installs the plugin and the gateway runtime's own plugin
 * inventory (`openclaw plugins list --json` over the Agent's rendered configuration) reports it
 * loaded and enabled, its disabled tool denied; a later deployment installs from the host cache
 * without asking the registry again. (This plugin declares no startup activation, so OpenClaw
 * 2026.9.6 imports it on first use, not at gateway start; `/tools/invoke` cannot show it.)
 */
import { afterAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { defaultInstallationConfig, type InstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import type { NamespaceId } from "@svc/core/schema"
import { WorkerLive } from "@svc/worker"
import { Duration, Effect, Layer } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { startPluginRegistry } from "../../../testing/pluginRegistry.js"
import { until } from "../../../testing/poll.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { apiTestLayerWith, expectData, seedAdmin, send } from "./support/iamServer.js"

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
const TARBALL = "/@ollama/openclaw-web-search/-/openclaw-web-search-0.2.2.tgz"

describe("plugins on a real gateway", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("install failures and missing credentials warn on a succeeded deployment; an installed plugin is loaded and gated", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("plugins-e2e@example.com")
        const call = (method: string, p: string, body?: unknown) => send(baseUrl, method, p, admin.headers, body)
        const ns = expectData(yield* call("POST", "/namespaces", { name: "plugins-e2e" }), 201).id as string
        yield* until(call("GET", `/namespaces/${ns}`), (r) => r.body.data?.status === "ready", 60)
        const configuration = expectData(yield* call("POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* call("POST", `/namespaces/${ns}/agents`, {
          name: "plugged",
          configurationId: configuration.id,
          harnessAuth: { method: "runtime" },
          plugins: {
            [WEB_SEARCH]: { enabled: true, tools: { ollama_web_fetch: { enabled: false } } },
            "bundled:zalo": { enabled: true },
            "bundled:synology-chat": { enabled: false }
          }
        }), 201)
        const agentPath = `/namespaces/${ns}/agents/${agent.id}`
        const deploy = Effect.gen(function* () {
          const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
          const done = yield* until(call("GET", `${agentPath}/deployments/${revision.id}`), (r) =>
            r.body.data?.status === "succeeded" || r.body.data?.status === "failed")
          return { revision, status: done.body.data }
        })
        const agentDir = path.join(Compute.namespaceDirectory(dataDir, ns), "agents", agent.id)
        const health = (revisionId: string) =>
          Compute.makeLocalCompute(dataDir, { runtimeRoot: testRuntimeRoot() }).gatewayHealth({ namespaceId: ns as NamespaceId, agentId: agent.id, revisionId })
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

        // 1. The registry serves altered bytes: the integrity check refuses them.
        registry.mode = "corrupt"
        const first = yield* deploy
        expect(first.status).toMatchObject({ status: "succeeded", error: null })
        expect(first.status.warnings).toEqual([
          { code: "PLUGIN_INSTALL_FAILED", pluginId: WEB_SEARCH },
          { code: "PLUGIN_AUTH_REQUIRED", pluginId: "bundled:zalo" }
        ])
        expect(yield* health(first.revision.id)).toBe("healthy")
        expect(yield* inventory).toEqual([])
        const corruptRequests = registry.requests().filter((p) => p === TARBALL).length
        expect(corruptRequests).toBe(1)
        // Nothing the check refused was kept.
        expect(yield* Effect.promise(() => fs.readdir(path.join(dataDir, "plugins")).catch(() => []))).toEqual([])

        // 2. The real bytes: installed, loaded, its disabled tool gated.
        registry.mode = "serve"
        const second = yield* deploy
        expect(second.status).toMatchObject({ status: "succeeded", error: null })
        expect(second.status.warnings).toEqual([{ code: "PLUGIN_AUTH_REQUIRED", pluginId: "bundled:zalo" }])
        expect(yield* health(second.revision.id)).toBe("healthy")
        const pluginDir = path.join(agentDir, "plugins", "openclaw-web-search")
        expect(yield* inventory).toEqual([expect.objectContaining({
          id: "openclaw-web-search",
          version: "0.2.2",
          rootDir: pluginDir,
          enabled: true,
          status: "loaded"
        })])
        const rendered = JSON.parse(yield* Effect.promise(() => fs.readFile(path.join(agentDir, "openclaw.json"), "utf8")))
        expect(rendered.plugins.load.paths).toEqual([pluginDir])
        expect(rendered.plugins.entries["openclaw-web-search"]).toEqual({ enabled: true, hooks: {} })
        expect(rendered.plugins.entries).not.toHaveProperty("zalo")
        expect(rendered.tools.deny).toEqual(["ollama_web_fetch"])
        expect(registry.requests().filter((p) => p === TARBALL)).toHaveLength(corruptRequests + 1)

        // 3. Cached per host: the registry is not asked again, even when it is down.
        registry.mode = "unavailable"
        const third = yield* deploy
        expect(third.status.warnings).toEqual([{ code: "PLUGIN_AUTH_REQUIRED", pluginId: "bundled:zalo" }])
        expect(yield* health(third.revision.id)).toBe("healthy")
        expect((yield* inventory).map((p) => p.status)).toEqual(["loaded"])
        expect(registry.requests().filter((p) => p === TARBALL)).toHaveLength(corruptRequests + 1)

        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 120)
      }), 20 * 60_000)
  })
})
