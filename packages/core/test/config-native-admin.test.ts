import { describe, expect, it } from "@effect/vitest"
import {
  agentHostLabel,
  decodeInstallationConfig,
  InstallationConfigError,
  loadStartupConfig,
  nativeAdminConsoleProblems
} from "@svc/core/config"
import { ConfigProvider, Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const FILE = "/etc/svc/installation.json"

const nativeAdmin = (overrides: Record<string, unknown> = {}) => ({
  enabled: true,
  agentHostSuffix: "agents.example.test",
  cookieDomain: "example.test",
  ...overrides
})

const problems = (input: Record<string, unknown>): ReadonlyArray<string> =>
  Either.match(decodeInstallationConfig(FILE, { nativeAdmin: input }), {
    onLeft: (error) => error.problems.map((p) => `${p.path}: ${p.message}`),
    onRight: () => []
  })

describe("Installation configuration: nativeAdmin (SPEC 5.8)", () => {
  it("accepts an explicit parent domain of the Agent host suffix; absent means off", () => {
    expect(problems(nativeAdmin())).toEqual([])
    expect(problems(nativeAdmin({ enabled: false }))).toEqual([])
    expect(problems(nativeAdmin({ agentHostSuffix: "example.test" }))).toEqual([])
    const decoded = Either.getOrThrow(decodeInstallationConfig(FILE, {}))
    expect(decoded.nativeAdmin).toBeUndefined()
  })

  it("rejects public suffixes (ICANN and private sections)", () => {
    expect(problems(nativeAdmin({ cookieDomain: "co.uk", agentHostSuffix: "agents.example.co.uk" }))).toEqual([
      "nativeAdmin.cookieDomain: is a public suffix; name a domain the Installation owns"
    ])
    expect(problems(nativeAdmin({ cookieDomain: "github.io", agentHostSuffix: "agents.svc.github.io" }))).toEqual([
      "nativeAdmin.cookieDomain: is a public suffix; name a domain the Installation owns"
    ])
    // A single label is never a cookie domain.
    expect(problems(nativeAdmin({ cookieDomain: "test" }))).toHaveLength(1)
  })

  it("rejects a cookie domain that is not a parent on a DNS-label boundary", () => {
    expect(problems(nativeAdmin({ agentHostSuffix: "agents.xexample.test" }))).toEqual([
      "nativeAdmin.agentHostSuffix: must be the cookie domain or below it"
    ])
    expect(problems(nativeAdmin({ agentHostSuffix: "agents.other.test" }))).toEqual([
      "nativeAdmin.agentHostSuffix: must be the cookie domain or below it"
    ])
    // A narrower cookie domain than the suffix is not a parent either.
    expect(problems(nativeAdmin({ cookieDomain: "x.agents.example.test" }))).toEqual([
      "nativeAdmin.agentHostSuffix: must be the cookie domain or below it"
    ])
  })

  it("rejects malformed domains and IP addresses", () => {
    for (const cookieDomain of ["127.0.0.1", "Example.Test", "example.test.", ".example.test", "exa mple.test", "*.example.test", "-x.example.test", "[::1]"]) {
      expect(problems(nativeAdmin({ cookieDomain })), cookieDomain).not.toEqual([])
    }
    expect(problems(nativeAdmin({ agentHostSuffix: "10.0.0.1" }))).not.toEqual([])
    expect(problems({ ...nativeAdmin(), extra: true })).not.toEqual([])
  })

  it("the console host (SVC_BASE_URL) must be at or below the cookie domain, a DNS name, and not an Agent host", () => {
    const config = { enabled: true, agentHostSuffix: "agents.example.test", cookieDomain: "example.test" }
    expect(nativeAdminConsoleProblems(config, "https://console.example.test")).toEqual([])
    expect(nativeAdminConsoleProblems(config, "https://example.test:8443")).toEqual([])
    expect(nativeAdminConsoleProblems(config, "https://console.xexample.test")).toEqual([
      "the console host \"console.xexample.test\" (SVC_BASE_URL) is not the cookie domain or below it"
    ])
    expect(nativeAdminConsoleProblems(config, "https://evil.com")).toHaveLength(1)
    expect(nativeAdminConsoleProblems(config, "http://127.0.0.1:8080")).toEqual([
      "the console host \"127.0.0.1\" (SVC_BASE_URL) must be a DNS name to share a cookie"
    ])
    expect(nativeAdminConsoleProblems(config, "https://console.agents.example.test")).toEqual([
      "the console host \"console.agents.example.test\" (SVC_BASE_URL) would be an Agent host"
    ])
  })

  it.effect("start-up stops on a console host outside the cookie domain, naming the setting", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-native-admin-"))
      const file = path.join(dir, "installation.json")
      fs.writeFileSync(file, JSON.stringify({ nativeAdmin: nativeAdmin() }))
      const load = (baseUrl: string) =>
        loadStartupConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([
          ["SVC_DATA_DIR", dir],
          ["SVC_INSTALLATION_CONFIG", file],
          ["SVC_BASE_URL", baseUrl]
        ]))))
      const error = yield* Effect.flip(load("https://console.other.test"))
      expect(error).toBeInstanceOf(InstallationConfigError)
      expect(error.message).toContain("nativeAdmin.cookieDomain: the console host \"console.other.test\"")
      const loaded = yield* load("https://console.example.test")
      expect(loaded.installation.nativeAdmin).toEqual(nativeAdmin())
    }))

  it("Agent host labels: exactly one DNS label before the suffix, port and case ignored", () => {
    const suffix = "agents.example.test"
    expect(agentHostLabel("abc.agents.example.test", suffix)).toBe("abc")
    expect(agentHostLabel("ABC.Agents.Example.Test:8443", suffix)).toBe("abc")
    expect(agentHostLabel("x.agents.example.test.evil.com", suffix)).toBeUndefined()
    expect(agentHostLabel("a.b.agents.example.test", suffix)).toBeUndefined()
    expect(agentHostLabel("agents.example.test", suffix)).toBeUndefined()
    expect(agentHostLabel("xagents.example.test", suffix)).toBeUndefined()
    expect(agentHostLabel(".agents.example.test", suffix)).toBeUndefined()
    expect(agentHostLabel("a_b.agents.example.test", suffix)).toBeUndefined()
  })
})
