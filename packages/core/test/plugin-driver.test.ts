/**
 * The `bundled` Plugin Driver's pure parts and its installer (DESIGN §15): what a frozen
 * selection plans (enabled plugins, denied tools, hook policy, missing credentials), how the plan
 * is rendered into a gateway configuration, and the installer's refusals over a real loopback
 * HTTP server (wrong bytes, 404, a 503 that is retried, a package that is not the pinned one).
 */
import { describe, expect, it } from "@effect/vitest"
import { renderGatewayConfig } from "@svc/core/drivers/compute"
import { catalogEntry, ensureInstalled, planPlugins, PluginInstallError, tarballPath } from "@svc/core/drivers/plugin"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const WEB = "bundled:openclaw-web-search"
const none = { values: {}, secretVariables: [] }

describe("planning a frozen selection", () => {
  it("disabled plugins are left out; tool enablement resolves override, then default, then on", () => {
    const { planned, warnings } = planPlugins({
      [WEB]: { enabled: true, toolDefaults: { enabled: false }, tools: { ollama_web_search: { enabled: true } }, driverPolicy: { allowPromptInjection: false } },
      "bundled:synology-chat": { enabled: false }
    }, none)
    expect(warnings).toEqual([])
    expect(planned.map((p) => ({ id: p.entry.id, denied: p.deniedTools, hooks: p.hooks }))).toEqual([
      { id: WEB, denied: ["ollama_web_fetch"], hooks: { allowPromptInjection: false } }
    ])
    expect(planPlugins({ [WEB]: { enabled: true } }, none).planned[0]!.deniedTools).toEqual([])
  })

  it("enabled: false beats every tool override (SPEC 2.9): nothing of the plugin is planned", () => {
    const overrides = { toolDefaults: { enabled: true }, tools: { ollama_web_search: { enabled: true }, ollama_web_fetch: { enabled: true } } }
    expect(planPlugins({ [WEB]: { enabled: false, ...overrides } }, none)).toEqual({ planned: [], warnings: [] })
    expect(planPlugins({ [WEB]: { enabled: true, ...overrides } }, none).planned.map((p) => p.entry.id)).toEqual([WEB])
  })

  it("a plugin without its credential is not planned but warned about; a Secret binding or a config value satisfies it", () => {
    expect(planPlugins({ "bundled:zalo": { enabled: true } }, none)).toEqual({
      planned: [],
      warnings: [{ code: "PLUGIN_AUTH_REQUIRED", pluginId: "bundled:zalo" }]
    })
    expect(planPlugins({ "bundled:zalo": { enabled: true } }, { values: {}, secretVariables: ["ZALO_BOT_TOKEN"] }).planned).toHaveLength(1)
    expect(planPlugins({ "bundled:zalo": { enabled: true } }, { values: { channels: { zalo: { botToken: "x" } } }, secretVariables: [] }).planned).toHaveLength(1)
    expect(planPlugins({ "bundled:zalo": { enabled: true } }, { values: { channels: { zalo: { botToken: "" } } }, secretVariables: [] }).warnings).toHaveLength(1)
  })

  it("an ID the catalog no longer has cannot be installed", () => {
    expect(planPlugins({ "bundled:gone": { enabled: true } }, none).warnings).toEqual([{ code: "PLUGIN_INSTALL_FAILED", pluginId: "bundled:gone" }])
  })
})

describe("rendering plugins into the gateway configuration", () => {
  const enforced = { port: 20_120, workspace: "/w", logFile: "/l" }
  const plugins = { loadPaths: ["/a/plugins/p"], entries: { p: { hooks: { allowPromptInjection: false } } }, deniedTools: ["t2"] }

  it("load paths are exactly ours, entries enabled with their hooks, denied tools join the user's", () => {
    const rendered = renderGatewayConfig({
      plugins: { entries: { p: { enabled: false, config: { a: 1 } }, other: { enabled: true } }, allow: ["other"], deny: ["p", "x"] },
      tools: { deny: ["t1"] }
    }, { ...enforced, plugins })
    expect(rendered.plugins).toEqual({
      entries: { p: { enabled: true, config: { a: 1 }, hooks: { allowPromptInjection: false } }, other: { enabled: true } },
      allow: ["other", "p"],
      deny: ["x"],
      load: { paths: ["/a/plugins/p"] }
    })
    expect((rendered.tools as Record<string, unknown>).deny).toEqual(["t1", "t2"])
  })

  it("no plugins: the user's plugin settings are left as they are", () => {
    expect(renderGatewayConfig({ plugins: { entries: { x: { enabled: true } } } }, enforced).plugins).toEqual({ entries: { x: { enabled: true } } })
    expect(renderGatewayConfig({}, { ...enforced, plugins: { loadPaths: [], entries: {}, deniedTools: [] } })).not.toHaveProperty("plugins")
  })
})

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "testing", "fixtures", "plugins", "openclaw-web-search-0.2.2.tgz")

/** A loopback registry answering each request with the next of `answers`. */
const serve = async (answers: Array<(res: http.ServerResponse) => void>) => {
  const paths: Array<string> = []
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? "")
    const answer = answers.shift()
    if (answer === undefined) res.writeHead(500).end()
    else answer(res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, close: () => new Promise<void>((r) => server.close(() => r())) }
}

const failure = (promise: Promise<unknown>) =>
  promise.then(() => expect.unreachable("installed"), (error: unknown) => {
    expect(error).toBeInstanceOf(PluginInstallError)
    return error as PluginInstallError
  })

describe("installing a catalog plugin", () => {
  const entry = catalogEntry(WEB)!

  it("retries a 503, checks the integrity, unpacks once and reuses the cache", async () => {
    const bytes = await fs.readFile(FIXTURE)
    const cacheRoot = await fs.mkdtemp(path.join(os.tmpdir(), "svc-plugin-cache-"))
    const registry = await serve([(res) => res.writeHead(503).end(), (res) => res.writeHead(200).end(bytes)])
    try {
      const dir = await ensureInstalled(entry, { registry: registry.url, cacheRoot })
      expect(JSON.parse(await fs.readFile(path.join(dir, "package.json"), "utf8")).name).toBe("@ollama/openclaw-web-search")
      expect(await ensureInstalled(entry, { registry: registry.url, cacheRoot })).toBe(dir)
      expect(registry.paths).toEqual([tarballPath(entry), tarballPath(entry)])
    } finally {
      await registry.close()
      await fs.rm(cacheRoot, { recursive: true, force: true })
    }
  })

  it("refuses other bytes and a 404 without retrying, and keeps nothing", async () => {
    const cacheRoot = await fs.mkdtemp(path.join(os.tmpdir(), "svc-plugin-cache-"))
    const registry = await serve([(res) => res.writeHead(200).end(Buffer.from("not the package")), (res) => res.writeHead(404).end()])
    try {
      expect((await failure(ensureInstalled(entry, { registry: registry.url, cacheRoot }))).reason).toBe("the tarball does not match the pinned integrity")
      expect((await failure(ensureInstalled(entry, { registry: registry.url, cacheRoot }))).reason).toBe("the registry answered 404")
      expect(registry.paths).toHaveLength(2)
      expect(await fs.readdir(cacheRoot)).toEqual([])
    } finally {
      await registry.close()
      await fs.rm(cacheRoot, { recursive: true, force: true })
    }
  })

  it("a registry that stays unavailable fails after its attempts, transiently", async () => {
    const registry = await serve([(res) => res.writeHead(503).end(), (res) => res.writeHead(502).end()])
    try {
      const error = await failure(ensureInstalled(entry, { registry: registry.url, cacheRoot: os.tmpdir(), attempts: 2 }))
      expect({ reason: error.reason, transient: error.transient }).toEqual({ reason: "the registry answered 502", transient: true })
    } finally {
      await registry.close()
    }
  })
})
