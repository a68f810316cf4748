import { describe, expect, it } from "@effect/vitest"
import { classifyProbeAnswer, clampExecPolicy, renderGatewayConfig } from "@svc/core/drivers/compute"
import { refusedGatewayValues } from "@svc/core/schema"

/** The value at a dotted path of a rendered document. */
const get = (document: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document)

const enforced = { port: 20_120, workspace: "/data/ns/agents/a/workspace", logFile: "/data/ns/agents/a/logs/openclaw.log" }

describe("gateway configuration rendering", () => {
  it("enforces our settings over an empty document", () => {
    expect(renderGatewayConfig({}, enforced)).toEqual({
      gateway: {
        mode: "local",
        bind: "loopback",
        port: 20_120,
        auth: { mode: "token" },
        tailscale: { mode: "off" },
        http: { endpoints: { chatCompletions: { enabled: true } } }
      },
      update: { checkOnStart: false, auto: { enabled: false } },
      telemetry: { enabled: false },
      discovery: { mdns: { mode: "off" } },
      models: { catalogRefresh: { enabled: false } },
      agents: { defaults: { workspace: enforced.workspace, heartbeat: { every: "0m" }, elevatedDefault: "off" } },
      tools: { exec: { security: "deny" }, elevated: { enabled: false }, fs: { workspaceOnly: true } },
      env: { shellEnv: { enabled: false } },
      logging: { file: enforced.logFile }
    })
  })

  it("keeps the user's values and lets enforced settings win", () => {
    const values = {
      gateway: {
        mode: "remote",
        bind: "lan",
        port: 1,
        auth: { mode: "none", token: "leak" },
        tailscale: { mode: "funnel" },
        controlUi: { enabled: true },
        http: { endpoints: { chatCompletions: { enabled: false }, responses: { enabled: true } } }
      },
      update: { checkOnStart: true, channel: "stable" },
      telemetry: { enabled: true },
      models: {
        catalogRefresh: { enabled: true },
        providers: { fake: { baseUrl: "http://127.0.0.1:1/v1", api: "openai-completions", models: [{ id: "m", name: "M" }] } }
      },
      agents: {
        defaults: { model: "fake/m", workspace: "/etc", cwd: "/", heartbeat: { every: "5m", prompt: "hi" } },
        entries: {
          main: {
            workspace: "/root",
            cwd: "/",
            agentDir: "/x",
            name: "Main",
            heartbeat: { every: "1m" },
            tools: { exec: { security: "full", ask: "off" }, elevated: { enabled: true } }
          }
        }
      },
      logging: { level: "debug", file: "/tmp/shared.log" }
    }
    const rendered = renderGatewayConfig(values, enforced)
    expect(get(rendered, "gateway")).toEqual({
      mode: "local",
      bind: "loopback",
      port: 20_120,
      auth: { mode: "token" },
      tailscale: { mode: "off" },
      controlUi: { enabled: true },
      http: { endpoints: { chatCompletions: { enabled: true }, responses: { enabled: true } } }
    })
    expect(get(rendered, "update")).toEqual({ checkOnStart: false, channel: "stable", auto: { enabled: false } })
    expect(get(rendered, "telemetry")).toEqual({ enabled: false })
    expect(get(rendered, "models.catalogRefresh")).toEqual({ enabled: false })
    expect(get(rendered, "models.providers")).toEqual(values.models.providers)
    expect(get(rendered, "agents.defaults")).toEqual({
      model: "fake/m",
      workspace: enforced.workspace,
      heartbeat: { every: "0m", prompt: "hi" },
      elevatedDefault: "off"
    })
    expect(get(rendered, "agents.entries")).toEqual({
      main: {
        name: "Main",
        heartbeat: { every: "0m" },
        tools: { exec: { security: "deny", ask: "off" }, elevated: { enabled: false } }
      }
    })
    expect(get(rendered, "logging")).toEqual({ level: "debug", file: enforced.logFile })
    // The input is not modified.
    expect(values.gateway.mode).toBe("remote")
    expect(values.agents.entries.main.workspace).toBe("/root")
  })

  it("keeps host command execution only denied or approval-gated", () => {
    expect(clampExecPolicy(undefined)).toEqual({ security: "deny" })
    expect(clampExecPolicy({ security: "deny", ask: "off" })).toEqual({ security: "deny", ask: "off" })
    expect(clampExecPolicy({ security: "allowlist", ask: "on-miss", safeBins: ["ls"] }))
      .toEqual({ security: "allowlist", ask: "on-miss", safeBins: ["ls"] })
    expect(clampExecPolicy({ security: "allowlist", ask: "always" })).toEqual({ security: "allowlist", ask: "always" })
    expect(clampExecPolicy({ security: "allowlist", ask: "off" })).toEqual({ security: "deny", ask: "off" })
    expect(clampExecPolicy({ security: "allowlist" })).toEqual({ security: "deny" })
    expect(clampExecPolicy({ security: "full", ask: "always" })).toEqual({ security: "deny", ask: "always" })
    expect(clampExecPolicy({ ask: "always", timeoutSeconds: 5 })).toEqual({ security: "deny", ask: "always", timeoutSeconds: 5 })
  })
})

describe("model probe classification", () => {
  it("tells an upstream credential rejection from the gateway's own 401 and other failures", () => {
    expect(classifyProbeAnswer(200, { choices: [{ message: { content: "OK" } }] })).toEqual({ _tag: "Succeeded" })
    expect(classifyProbeAnswer(200, { choices: [] })._tag).toBe("Failed")
    expect(classifyProbeAnswer(401, { error: { message: "401 Incorrect API key provided.", type: "authentication_error" } }))
      .toEqual({ _tag: "AuthenticationFailed", status: 401 })
    expect(classifyProbeAnswer(403, { error: { message: "forbidden", type: "permission_error" } }))
      .toEqual({ _tag: "AuthenticationFailed", status: 403 })
    expect(classifyProbeAnswer(401, { error: { message: "Unauthorized", type: "unauthorized" } }))
      .toEqual({ _tag: "Failed", status: 401, reason: "gateway token rejected" })
    expect(classifyProbeAnswer(429, { error: { type: "rate_limit_error" } }))
      .toEqual({ _tag: "Failed", status: 429, reason: "rate_limit_error" })
    expect(classifyProbeAnswer(502, "not json")).toEqual({ _tag: "Failed", status: 502, reason: "unexpected answer" })
  })

  it("forces tools.fs.workspaceOnly and drops every key that names a host path or sets a reserved variable", () => {
    const rendered = renderGatewayConfig({
      tools: { fs: { workspaceOnly: false }, exec: { security: "deny", pathPrepend: ["/srv/bin"] } },
      plugins: { load: { paths: ["/srv/plugins"] }, entries: { x: { enabled: true } } },
      agents: { defaults: { repoRoot: "/srv", model: "fake/m" }, entries: { main: { memory: { search: { extraPaths: ["/etc"] } } } } },
      logging: { file: "/var/log/openclaw.log", level: "debug" },
      env: { vars: { NODE_OPTIONS: "--require /tmp/x.js", " LD_PRELOAD": "/tmp/x.so", GREETING: "hi" }, shellEnv: { enabled: true }, "HTTPS_PROXY ": "http://proxy.example", HTTP_PROXY: "http://proxy.example", NAME: "n" },
      hooks: { path: "/hooks" }
    }, enforced)
    expect(get(rendered, "tools.fs.workspaceOnly")).toBe(true)
    expect(get(rendered, "tools.exec")).toEqual({ security: "deny" })
    expect(get(rendered, "plugins")).toEqual({ load: {}, entries: { x: { enabled: true } } })
    expect(get(rendered, "agents.defaults.repoRoot")).toBeUndefined()
    expect(get(rendered, "agents.defaults.model")).toBe("fake/m")
    expect(get(rendered, "agents.entries.main.memory.search")).toEqual({})
    expect(get(rendered, "logging")).toEqual({ file: enforced.logFile, level: "debug" })
    expect(get(rendered, "env")).toEqual({ vars: { GREETING: "hi" }, shellEnv: { enabled: false }, NAME: "n" })
    expect(get(rendered, "hooks.path")).toBe("/hooks")
  })

  it("finds host-path keys anywhere, with their paths; URL paths are not host paths", () => {
    expect(refusedGatewayValues({
      browser: { executablePath: "/usr/bin/chromium", profiles: { p: { userDataDir: "/root/.config" } } },
      mcp: { servers: { s: { cwd: "/" } } },
      gateway: { controlUi: { root: "/srv/ui", basePath: "/ui" }, tls: { keyPath: "/etc/ssl/k" } },
      bindings: [{ acp: { cwd: "/home" } }],
      channels: { msteams: { webhook: { path: "/teams" } }, feishu: { dynamicAgentCreation: { workspaceTemplate: "/w/{id}" } } }
    }).map((refused) => refused.path.join("/"))).toEqual([
      "browser/executablePath",
      "browser/profiles/p/userDataDir",
      "mcp/servers/s/cwd",
      "gateway/controlUi/root",
      "gateway/tls/keyPath",
      "bindings/0/acp/cwd",
      "channels/feishu/dynamicAgentCreation/workspaceTemplate"
    ])
  })
})
