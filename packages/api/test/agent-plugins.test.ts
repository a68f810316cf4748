/**
 * Plugins over the real API and database (SPEC 2.2 `pluginPolicies`, 2.9, 4.4 plugin routes,
 * 7.3; DESIGN §15): the `bundled` Plugin Driver's catalog routes, its capabilities, admission of
 * the full desired state on create, PATCH and provision with every refusal, and the frozen
 * snapshot in revisions. Without a Plugin Driver both routes and any selection answer 501.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig, type InstallationConfig } from "@svc/core/config"
import { bundledPolicies, CATALOG_VERSION } from "@svc/core/drivers/plugin"
import { BuiltinRoles } from "@svc/core/iam"
import { NamespaceId } from "@svc/core/schema"
import { bindRole } from "../../../testing/identity.js"
import { Effect } from "effect"
import { apiTestLayer, expectData, expectError, seedHuman, send } from "./support/iamServer.js"
import { errorDetails, type Result, setUpPlugins as setUp, WEB_SEARCH } from "./support/pluginsWorld.js"

const bundled: InstallationConfig = {
  ...defaultInstallationConfig,
  drivers: { ...defaultInstallationConfig.drivers, plugin: { id: "bundled" } }
}

const webSearchView = {
  id: WEB_SEARCH,
  name: "Ollama Web Search",
  tools: [
    { id: "ollama_web_search", name: "Ollama Web Search", description: "Search the web for current information." },
    { id: "ollama_web_fetch", name: "Ollama Web Fetch", description: "Fetch the content of a web page by URL." }
  ],
  available: true,
  description: "Web search and page fetch through a local Ollama server's web search API.",
  remoteId: "@ollama/openclaw-web-search@0.2.2",
  selectableWithoutTools: false,
  websiteUrl: "https://www.npmjs.com/package/@ollama/openclaw-web-search"
}

const zaloView = {
  id: "bundled:zalo",
  name: "Zalo",
  tools: null,
  available: true,
  description: "Zalo channel: the Agent chats through a Zalo bot.",
  remoteId: "@openclaw/zalo@2026.9.5",
  selectableWithoutTools: true,
  websiteUrl: "https://www.npmjs.com/package/@openclaw/zalo",
  unavailableHelp: { label: "Zalo channel setup", url: "https://docs.openclaw.ai/channels/zalo" }
}

/** Every field the driver supports, at every scope it supports it. */
const fullSelection = {
  [WEB_SEARCH]: {
    enabled: true,
    toolDefaults: { enabled: true, approval: "provider_default" },
    tools: { ollama_web_fetch: { enabled: false }, ollama_web_search: { approval: "provider_default" } },
    driverPolicy: { allowPromptInjection: false, allowConversationAccess: false }
  },
  "bundled:zalo": { enabled: false }
}

describe("the bundled Plugin Driver", () => {
  it.layer(apiTestLayer(bundled), { timeout: 120_000 })((it) => {
    it.effect("GET /installation shows its pluginPolicies", () =>
      Effect.gen(function* () {
        const { baseUrl, admin } = yield* setUp("caps")
        const installation = expectData(yield* send(baseUrl, "GET", "/installation", admin.headers), 200)
        expect(installation.capabilities.pluginPolicies).toEqual({
          reviewers: { defaults: [], tool: [] },
          approvers: { agentDefault: true, pluginOverride: false, toolOverride: false },
          approvalModes: ["provider_default"]
        })
        expect(installation.capabilities.pluginPolicies).toEqual(bundledPolicies)
      }))

    it.effect("POST .../agents/plugins lists the catalog, searched by q and paged by cursor", () =>
      Effect.gen(function* () {
        const { call } = yield* setUp("list")
        const all = expectData(yield* call("POST", "agents/plugins", {}), 200)
        expect(all.nextCursor).toBeNull()
        expect(all.plugins.map((p: { id: string }) => p.id)).toEqual([WEB_SEARCH, "bundled:synology-chat", "bundled:zalo"])
        expect(all.plugins[0]).toEqual(webSearchView)
        expect(all.plugins[2]).toEqual(zaloView)
        expect(all).not.toHaveProperty("setup")
        expect(expectData(yield* call("POST", "agents/plugins", { q: "ZALO" }), 200)).toEqual({ plugins: [zaloView], nextCursor: null })
        expect(expectData(yield* call("POST", "agents/plugins", { q: "nothing-like-it" }), 200)).toEqual({ plugins: [], nextCursor: null })
        const after = expectData(yield* call("POST", "agents/plugins", { cursor: "bundled:synology-chat" }), 200)
        expect(after).toEqual({ plugins: [zaloView], nextCursor: null })
      }))

    it.effect("POST .../agents/plugins/details describes one plugin; unknown is 404", () =>
      Effect.gen(function* () {
        const { call } = yield* setUp("details")
        expect(expectData(yield* call("POST", "agents/plugins/details", { pluginId: WEB_SEARCH }), 200)).toEqual(webSearchView)
        expect(expectData(yield* call("POST", "agents/plugins/details", { pluginId: "bundled:zalo" }), 200)).toEqual(zaloView)
        expectError(yield* call("POST", "agents/plugins/details", { pluginId: "bundled:nope" }), 404, "NOT_FOUND")
      }))

    it.effect("bad bodies are 400 with details; an absent Namespace is 404; no agent:create is 403", () =>
      Effect.gen(function* () {
        const { baseUrl, admin, call, ns } = yield* setUp("bad")
        const details = (result: Result) => {
          expectError(result, 400, "INVALID_REQUEST")
          return errorDetails(result)
        }
        expect(details(yield* call("POST", "agents/plugins", { q: "" }))).toEqual([{ code: "INVALID_VALUE", path: "/q" }])
        expect(details(yield* call("POST", "agents/plugins", { q: "x".repeat(201) }))).toEqual([{ code: "TOO_LONG", path: "/q" }])
        expect(details(yield* call("POST", "agents/plugins", { page: 2 }))).toEqual([{ code: "UNKNOWN_FIELD", path: "/page" }])
        expect(details(yield* call("POST", "agents/plugins", { cursor: 7 }))).toEqual([{ code: "INVALID_TYPE", path: "/cursor" }])
        expect(details(yield* call("POST", "agents/plugins/details", {}))).toEqual([{ code: "REQUIRED", path: "/pluginId" }])
        expect(details(yield* call("POST", "agents/plugins/details", { pluginId: "bad id" }))).toEqual([{ code: "INVALID_FORMAT", path: "/pluginId" }])
        const absent = `/namespaces/${NamespaceId.make()}/agents/plugins`
        expectError(yield* send(baseUrl, "POST", absent, admin.headers, {}), 404, "NOT_FOUND")
        // A stranger does not learn the Namespace exists; a viewer (no agent:create) is refused.
        const stranger = yield* seedHuman("plugins-stranger@example.com")
        expectError(yield* call("POST", "agents/plugins", {}, stranger.headers), 404, "NOT_FOUND")
        const viewer = yield* seedHuman("plugins-viewer@example.com")
        yield* bindRole(viewer.principalId, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        expectError(yield* call("POST", "agents/plugins", {}, viewer.headers), 403, "FORBIDDEN")
        expectError(yield* call("POST", "agents/plugins/details", { pluginId: WEB_SEARCH }, viewer.headers), 403, "FORBIDDEN")
      }))

    it.effect("create, PATCH and provision admit the full desired state and save it as sent", () =>
      Effect.gen(function* () {
        const { call, configurationId } = yield* setUp("admit")
        const approvers = [{ channel: "chat", id: "team:T1:user:U1" }]
        const agent = expectData(yield* call("POST", "agents", { name: "bot", configurationId, plugins: fullSelection, pluginApprovers: approvers }), 201)
        expect(agent.plugins).toEqual(fullSelection)
        expect(agent.pluginApprovers).toEqual(approvers)
        const patched = expectData(yield* call("PATCH", `agents/${agent.id}`, { configurationId, plugins: { "bundled:zalo": { enabled: true } } }), 200)
        expect(patched.plugins).toEqual({ "bundled:zalo": { enabled: true } })
        expect(expectData(yield* call("GET", `agents/${agent.id}`), 200).plugins).toEqual({ "bundled:zalo": { enabled: true } })
        expectData(yield* call("POST", "agents/provision", {
          requestId: "req_0b8a5f4e-2d1c-4e6f-9a8b-7c6d5e4f3a2b",
          name: "provisioned",
          configuration: { kind: "agent", values: {} },
          plugins: fullSelection
        }), 202)
      }))

    it.effect("every unsupported part of a selection is refused with 400 at its place, and nothing changes", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { call, configurationId, ns } = yield* setUp("refuse")
        const agent = expectData(yield* call("POST", "agents", { name: "bot", configurationId }), 201)
        const refused = (plugins: unknown) =>
          Effect.gen(function* () {
            const create = yield* call("POST", "agents", { name: "other", configurationId, plugins })
            const patch = yield* call("PATCH", `agents/${agent.id}`, { configurationId, plugins })
            expectError(create, 400, "INVALID_REQUEST")
            expectError(patch, 400, "INVALID_REQUEST")
            expect(errorDetails(patch)).toEqual(errorDetails(create))
            return errorDetails(create)
          })
        const p = (selection: Record<string, unknown>) => ({ [WEB_SEARCH]: { enabled: true, ...selection } })
        const at = (rest: string) => `/plugins/${WEB_SEARCH}${rest}`
        expect(yield* refused({ "bundled:nope": { enabled: true } })).toEqual([{ code: "INVALID_VALUE", path: "/plugins/bundled:nope" }])
        expect(yield* refused({ "other:zalo": { enabled: false } })).toEqual([{ code: "INVALID_VALUE", path: "/plugins/other:zalo" }])
        expect(yield* refused(p({ tools: { no_such_tool: { enabled: true } } }))).toEqual([{ code: "INVALID_VALUE", path: at("/tools/no_such_tool") }])
        expect(yield* refused({ "bundled:zalo": { enabled: true, tools: { send: { enabled: true } } } })).toEqual([
          { code: "INVALID_VALUE", path: "/plugins/bundled:zalo/tools/send" }
        ])
        for (const approval of ["all_actions", "write_actions", "none"]) {
          expect(yield* refused(p({ toolDefaults: { approval }, tools: { ollama_web_search: { approval } } }))).toEqual([
            { code: "INVALID_VALUE", path: at("/toolDefaults/approval") },
            { code: "INVALID_VALUE", path: at("/tools/ollama_web_search/approval") }
          ])
        }
        for (const reviewer of ["human", "auto"]) {
          expect(yield* refused(p({ toolDefaults: { reviewer }, tools: { ollama_web_fetch: { reviewer } } }))).toEqual([
            { code: "INVALID_VALUE", path: at("/toolDefaults/reviewer") },
            { code: "INVALID_VALUE", path: at("/tools/ollama_web_fetch/reviewer") }
          ])
        }
        const approvers = [{ channel: "chat", id: "U1" }]
        expect(yield* refused(p({ approvers, tools: { ollama_web_fetch: { approvers } } }))).toEqual([
          { code: "INVALID_VALUE", path: at("/approvers") },
          { code: "INVALID_VALUE", path: at("/tools/ollama_web_fetch/approvers") }
        ])
        expect(yield* refused(p({ driverPolicy: { sandbox: true, allowPromptInjection: "yes" } }))).toEqual([
          { code: "UNKNOWN_FIELD", path: at("/driverPolicy/sandbox") },
          { code: "INVALID_TYPE", path: at("/driverPolicy/allowPromptInjection") }
        ])
        // Legacy values and fields (SPEC 2.9) are refused by the request schema itself.
        for (const legacy of ["native", "prompt", "approve"]) {
          expect(yield* refused(p({ toolDefaults: { approval: legacy } }))).toEqual([{ code: "INVALID_VALUE", path: at("/toolDefaults/approval") }])
        }
        expect(yield* refused(p({ approvalMode: "all_actions" }))).toEqual([{ code: "UNKNOWN_FIELD", path: at("/approvalMode") }])
        expect(yield* refused(p({ toolDefaults: { enabled: true, writeApproval: "all_actions" } }))).toEqual([
          { code: "UNKNOWN_FIELD", path: at("/toolDefaults/writeApproval") }
        ])
        expect(yield* refused(null)).toEqual([{ code: "INVALID_TYPE", path: "/plugins" }])
        expectError(yield* call("POST", "agents/provision", {
          requestId: "req_1c9b6a5f-3e2d-4f7a-8b9c-8d7e6f5a4b3c",
          name: "provisioned",
          configuration: { kind: "agent", values: {} },
          plugins: { "bundled:nope": { enabled: true } }
        }), 400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: "/plugins/bundled:nope" }])
        expect(expectData(yield* call("GET", `agents/${agent.id}`), 200)).not.toHaveProperty("plugins")
        expect(yield* sql`SELECT id FROM agents WHERE namespace_id = ${ns}`).toHaveLength(1)
      }))

    it.effect("a deployed revision freezes the selection with its Driver and catalog", () =>
      Effect.gen(function* () {
        const { call, configurationId } = yield* setUp("snapshot")
        const agent = expectData(yield* call("POST", "agents", {
          name: "bot",
          configurationId,
          harnessAuth: { method: "runtime" },
          plugins: fullSelection
        }), 201)
        const revision = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202)
        expect(revision.plugins).toEqual({ driver: { id: "bundled", implementation: `bundled@${CATALOG_VERSION}` }, plugins: fullSelection })
        // A later draft change does not touch the frozen snapshot.
        expectData(yield* call("PATCH", `agents/${agent.id}`, { configurationId, plugins: {} }), 200)
        const read = expectData(yield* call("GET", `agents/${agent.id}/revisions/${revision.id}`), 200)
        expect(read.plugins).toEqual(revision.plugins)
      }))
  })
})
