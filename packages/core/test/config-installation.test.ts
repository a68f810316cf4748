import { describe, expect, it } from "@effect/vitest"
import {
  defaultInstallationConfig,
  formatStartupError,
  InstallationConfigError,
  loadInstallationConfig,
  sandboxGatewayTarget
} from "@svc/core/config"
import { Effect, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  codeHost,
  decoded,
  driversWithoutAccounts,
  fullDrivers,
  modelAccounts,
  problems,
  sandboxGateway
} from "./support/installationConfigs.js"

const writeFile = (content: string): string => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-installation-")), "installation.json")
  fs.writeFileSync(file, content)
  return file
}

describe("Installation configuration", () => {
  it.effect("defaults to IAM builtin, Compute local, Secret builtin and no Backends without a file", () =>
    Effect.gen(function*() {
      const config = yield* loadInstallationConfig(Option.none())
      expect(config).toEqual({
        drivers: { iam: { id: "builtin" }, compute: { id: "local" }, secret: { id: "builtin" } },
        backends: [],
        providers: {}
      })
      expect(config).toEqual(defaultInstallationConfig)
      // An empty file object means the same.
      expect(decoded({})).toEqual(defaultInstallationConfig)
    }))

  it("decodes a complete file", () => {
    const config = decoded({
      drivers: fullDrivers,
      backends: [modelAccounts, codeHost, sandboxGateway],
      providers: {
        idprovider: {
          issuer: "https://id.example.com",
          authorizationUrl: "https://id.example.com/authorize",
          tokenUrl: "https://id.example.com/token",
          clientId: "svc",
          clientSecret: "provider-client-secret",
          scopes: ["openid", "email"]
        }
      }
    })
    expect(config.drivers.iam).toEqual({ id: "builtin" })
    expect(config.drivers.compute).toEqual({ id: "kubernetes", context: "prod" })
    expect(config.backends.map((b) => b.type)).toEqual(["model_accounts", "code_host", "sandbox_gateway"])
    const models = config.backends[0]
    expect(models?.type === "model_accounts" && models.configuration.credentialTtlSeconds).toBe(2592000)
    const sandbox = config.backends[2]
    expect(sandbox?.type === "sandbox_gateway" && sandbox.configuration.requestTimeoutMs).toBe(10000)
    const secret = config.providers.idprovider?.clientSecret
    expect(secret && Redacted.isRedacted(secret) && Redacted.value(secret)).toBe("provider-client-secret")
  })

  it("rejects unknown keys with their JSON path", () => {
    expect(problems({ drivers: { compute: { id: "local" }, scheduler: "x" } })).toEqual([
      `drivers.scheduler: is unexpected, expected: "iam" | "compute" | "secret" | "plugin" | "serviceAccount" | "repo" | "credentialGateway" | "sandbox"`
    ])
    // SPEC 2.15: inline keys and adminKeyPath are rejected.
    expect(problems({
      drivers: fullDrivers,
      backends: [{ ...modelAccounts, configuration: { ...modelAccounts.configuration, adminKeyPath: "/k" } }]
    })).toEqual([
      `backends[0].configuration.adminKeyPath: is unexpected, expected: "workspaceId" | "apiKeyPath" | "credentialTtlSeconds"`
    ])
    expect(problems({ features: {} })).toEqual([`features: is unexpected, expected: "drivers" | "backends" | "providers" | "nativeAdmin"`])
  })

  it("rejects bad types and values with their JSON path and rule", () => {
    expect(problems({ backends: {} })).toEqual([expect.stringMatching(/^backends: Expected ReadonlyArray</)])
    expect(problems({
      drivers: fullDrivers,
      backends: [
        {
          ...modelAccounts,
          configuration: { workspaceId: "not-a-uuid", apiKeyPath: "keys/admin", credentialTtlSeconds: 0 }
        }
      ]
    })).toEqual([
      "backends[0].configuration.workspaceId: Expected a Universally Unique Identifier",
      "backends[0].configuration.apiKeyPath: must be an absolute path",
      "backends[0].configuration.credentialTtlSeconds: must be an integer between 1 and 2592000"
    ])
    expect(problems({ drivers: { repo: { ...fullDrivers.repo, sessionDurationSeconds: "1h" } } })).toEqual([
      "drivers.repo.sessionDurationSeconds: Expected number"
    ])
  })

  it("keeps quoted input out of messages (a misplaced secret stays unprinted)", () => {
    const lines = problems({ drivers: { iam: { id: "sk-live-very-secret-value" } } })
    expect(lines).toEqual([`drivers.iam.id: Expected "builtin"`])
  })

  it("checks Backends against the selected Drivers (SPEC 2.15)", () => {
    expect(problems({ backends: [codeHost] })).toEqual([
      `backends[0].drivers.repo: names the repo Driver "codehost", but drivers.repo is not selected`
    ])
    expect(problems({ drivers: { ...fullDrivers, serviceAccount: { id: "other" } }, backends: [modelAccounts] })).toEqual([
      `backends[0].drivers.serviceAccount: must match the selected drivers.serviceAccount.id "other"`
    ])
    expect(problems({ drivers: driversWithoutAccounts, backends: [codeHost, { ...codeHost, id: "code-2" }] })).toEqual([
      "backends[1].type: only one Backend of type code_host is supported (backends[0] has it)"
    ])
  })

  // --- service accounts (model_accounts Backend, ServiceAccount Driver) ---
  describe("model_accounts and the ServiceAccount Driver (SPEC 2.15)", () => {
    const withModels = (backend: object, drivers: object = fullDrivers) => ({ drivers, backends: [backend] })
    it("accepts the Backend with its selected Driver and defaults credentialTtlSeconds", () => {
      const config = decoded(withModels(modelAccounts))
      expect(config.backends).toEqual([{ ...modelAccounts, configuration: { ...modelAccounts.configuration, credentialTtlSeconds: 2592000 } }])
      expect(decoded(withModels({ ...modelAccounts, configuration: { ...modelAccounts.configuration, credentialTtlSeconds: 1 } })).backends).toHaveLength(1)
    })
    it("rejects credentialTtlSeconds outside 1-2592000 and non-integers", () => {
      for (const ttl of [0, 2592001, 1.5, -1]) {
        expect(problems(withModels({ ...modelAccounts, configuration: { ...modelAccounts.configuration, credentialTtlSeconds: ttl } }))).toEqual([
          "backends[0].configuration.credentialTtlSeconds: must be an integer between 1 and 2592000"
        ])
      }
    })
    it("rejects inline keys, upstream URLs and adminKeyPath, without quoting their values", () => {
      for (const key of ["apiKey", "adminKey", "baseUrl", "endpoint", "url", "adminKeyPath"]) {
        const lines = problems(withModels({ ...modelAccounts, configuration: { ...modelAccounts.configuration, [key]: "sk-admin-inline-secret" } }))
        expect(lines).toEqual([
          `backends[0].configuration.${key}: is unexpected, expected: "workspaceId" | "apiKeyPath" | "credentialTtlSeconds"`
        ])
        expect(lines.join("\n")).not.toContain("sk-admin-inline-secret")
      }
      expect(problems({ drivers: { ...fullDrivers, serviceAccount: { id: "model-accounts", baseUrl: "https://x" } }, backends: [modelAccounts] })).toEqual([
        `drivers.serviceAccount.baseUrl: is unexpected, expected: "id"`
      ])
    })
    it("requires apiKeyPath and workspaceId, and the serviceAccount member", () => {
      expect(problems(withModels({ ...modelAccounts, configuration: {} }))).toEqual([
        "backends[0].configuration.workspaceId: is missing",
        "backends[0].configuration.apiKeyPath: is missing"
      ])
      expect(problems(withModels({ ...modelAccounts, drivers: {} }))).toEqual(["backends[0].drivers.serviceAccount: is missing"])
      expect(problems(withModels({ ...modelAccounts, drivers: { serviceAccount: "model-accounts", repo: "codehost" } }))).toEqual([
        `backends[0].drivers.repo: is unexpected, expected: "serviceAccount"`
      ])
    })
    it("member Drivers must be the selected ones; a selected ServiceAccount Driver needs the Backend", () => {
      const { serviceAccount: _omitted, ...withoutServiceAccount } = fullDrivers
      expect(problems(withModels(modelAccounts, withoutServiceAccount))).toEqual([
        `backends[0].drivers.serviceAccount: names the serviceAccount Driver "model-accounts", but drivers.serviceAccount is not selected`
      ])
      expect(problems({ drivers: fullDrivers, backends: [] })).toEqual([
        "drivers.serviceAccount: needs a model_accounts Backend naming it (its upstream client and admin key come from that Backend)"
      ])
      expect(problems({ drivers: fullDrivers, backends: [modelAccounts, { ...modelAccounts, id: "models-2" }] })).toEqual([
        "backends[1].type: only one Backend of type model_accounts is supported (backends[0] has it)"
      ])
      expect(problems({ drivers: fullDrivers, backends: [modelAccounts, { ...codeHost, id: "models" }] })).toEqual([
        "backends[1].id: duplicates the id of backends[0]"
      ])
    })
  })
  // --- end service accounts ---

  it("enforces the sandbox gateway transport rules", () => {
    const withConfiguration = (configuration: object) => ({
      drivers: driversWithoutAccounts,
      backends: [{ ...sandboxGateway, configuration }]
    })
    // Neither TLS nor bearer: the operator must acknowledge network-policy protection.
    expect(problems(withConfiguration({ endpoint: "sandbox:8080", auth: { mode: "unauthenticated" } }))).toEqual([
      `backends[0].configuration.insecureTransport: must be "network-policy" when the connection lacks TLS or bearer authentication`
    ])
    expect(decoded(withConfiguration({
      endpoint: "sandbox:8080",
      auth: { mode: "unauthenticated" },
      insecureTransport: "network-policy"
    })).backends).toHaveLength(1)
    // TLS and bearer: insecureTransport is rejected.
    expect(problems(withConfiguration({
      endpoint: "https://sandbox.example.com",
      auth: { mode: "bearerTokenFile", path: "/run/secrets/token" },
      insecureTransport: "network-policy"
    }))).toEqual([
      "backends[0].configuration.insecureTransport: is only allowed when the connection lacks TLS or bearer authentication"
    ])
    expect(problems(withConfiguration({
      endpoint: "https://sandbox.example.com/api",
      auth: { mode: "bearerTokenFile", path: "/run/secrets/token" }
    }))).toEqual([
      "backends[0].configuration.endpoint: must be host:port or an http(s) origin without credentials, path, query or fragment"
    ])
    expect(problems(withConfiguration({
      auth: { mode: "bearerTokenFile", path: "/run/secrets/token" },
      rootCertificatePath: "/ca.pem"
    }))).toEqual(["backends[0].configuration.endpoint: exactly one of endpoint or serviceName is required"])
  })

  // credential-sources: the sandbox_gateway Backend rules of SPEC 2.15, one case each.
  describe("sandbox_gateway Backend (SPEC 2.15)", () => {
    const withConfiguration = (configuration: object) => ({
      drivers: driversWithoutAccounts,
      backends: [{ ...sandboxGateway, configuration }]
    })
    const bearer = { mode: "bearerTokenFile", path: "/run/secrets/token" }
    const gateway = (configuration: object) => {
      const backend = decoded(withConfiguration(configuration)).backends[0]
      return backend?.type === "sandbox_gateway" ? backend.configuration : expect.fail("no sandbox_gateway Backend")
    }

    it("takes serviceName with scheme https by default only when rootCertificatePath is set, and port 8080", () => {
      const tls = gateway({ serviceName: "gw.svc", rootCertificatePath: "/ca.pem", auth: bearer })
      expect(sandboxGatewayTarget(tls)).toEqual({ address: "gw.svc:8080", tls: true })
      const plain = gateway({ serviceName: "gw.svc", auth: bearer, insecureTransport: "network-policy" })
      expect(sandboxGatewayTarget(plain)).toEqual({ address: "gw.svc:8080", tls: false })
      const chosen = gateway({ serviceName: "gw.svc", scheme: "https", port: 9443, auth: bearer })
      expect(sandboxGatewayTarget(chosen)).toEqual({ address: "gw.svc:9443", tls: true })
    })

    it("takes an endpoint as host:port or an http(s) origin, the origin's port defaulting to its scheme's", () => {
      expect(sandboxGatewayTarget(gateway({ endpoint: "gw:7000", auth: bearer, insecureTransport: "network-policy" })))
        .toEqual({ address: "gw:7000", tls: false })
      expect(sandboxGatewayTarget(gateway({ endpoint: "gw:7000", rootCertificatePath: "/ca.pem", auth: bearer })))
        .toEqual({ address: "gw:7000", tls: true })
      expect(sandboxGatewayTarget(gateway({ endpoint: "https://gw.example.com", auth: bearer })))
        .toEqual({ address: "gw.example.com:443", tls: true })
      expect(sandboxGatewayTarget(gateway({ endpoint: "http://127.0.0.1:7001", auth: bearer, insecureTransport: "network-policy" })))
        .toEqual({ address: "127.0.0.1:7001", tls: false })
    })

    it("takes RFC 1123 host names and IPv4 addresses, up to 63 characters a label and 253 in all", () => {
      const plain = { auth: bearer, insecureTransport: "network-policy" }
      const longest = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`
      for (const host of ["10.0.0.7", "gw-1.svc.cluster.local", "GW", "0gw", longest]) {
        expect(sandboxGatewayTarget(gateway({ endpoint: `${host}:8080`, ...plain }))).toEqual({ address: `${host}:8080`, tls: false })
      }
      expect(sandboxGatewayTarget(gateway({ endpoint: "https://gw-1.example.com", auth: bearer })))
        .toEqual({ address: "gw-1.example.com:443", tls: true })
    })

    it("takes a bracketed IPv6 literal in host:port as in an origin", () => {
      const plain = { auth: bearer, insecureTransport: "network-policy" }
      expect(sandboxGatewayTarget(gateway({ endpoint: "[::1]:8443", ...plain }))).toEqual({ address: "[::1]:8443", tls: false })
      expect(sandboxGatewayTarget(gateway({ endpoint: "[::1]:8443", rootCertificatePath: "/ca.pem", auth: bearer })))
        .toEqual({ address: "[::1]:8443", tls: true })
      expect(sandboxGatewayTarget(gateway({ endpoint: "[fd00:0:0:0:0:0:0:7]:65535", ...plain })))
        .toEqual({ address: "[fd00:0:0:0:0:0:0:7]:65535", tls: false })
      expect(sandboxGatewayTarget(gateway({ endpoint: "[::ffff:10.0.0.1]:1", ...plain }))).toEqual({ address: "[::ffff:10.0.0.1]:1", tls: false })
      expect(sandboxGatewayTarget(gateway({ endpoint: "http://[::1]:8443", ...plain }))).toEqual({ address: "[::1]:8443", tls: false })
      expect(sandboxGatewayTarget(gateway({ endpoint: "https://[::1]", auth: bearer }))).toEqual({ address: "[::1]:443", tls: true })
    })

    it("rejects an endpoint with credentials, query or fragment, and a bad port", () => {
      const message = "must be host:port or an http(s) origin without credentials, path, query or fragment"
      for (const endpoint of [
        "https://user:pw@gw.example.com", "https://gw.example.com?x=1", "https://gw.example.com#f", "gw:0", "gw:65536", "gw",
        "https://gw.example.com:0", "gw:080000",
        // IPv6: only bracketed, a valid literal, no zone, with a port in range.
        "::1:8443", "[::1]", "[::1]:", "[::1]:0", "[::1]:65536", "[1::2::3]:80", "[::g]:80", "[]:80", "[127.0.0.1]:80",
        "[fe80::1%eth0]:80", "[fe80::1%25eth0]:80", "[::1]x:80", "[::1]:80:80", "http://[::1]x:80", "http://::1:8443",
        // Host names: RFC 1123 labels only, in both forms.
        "-:80", "-gw:80", "gw-:80", "a..b:80", ".gw:80", "gw.:80", "a_b:80", `${"a".repeat(64)}:80`,
        `${"a.".repeat(126)}ab:80`, "http://-:80", "https://a..b", "https://a_b.example.com", "https://-gw.example.com"
      ]) {
        expect(problems(withConfiguration({ endpoint, auth: bearer }))).toContain(`backends[0].configuration.endpoint: ${message}`)
      }
    })

    it("rejects scheme and port next to an endpoint, and both or neither of endpoint and serviceName", () => {
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", scheme: "https", port: 443, auth: bearer }))).toEqual([
        "backends[0].configuration.scheme: is only allowed with serviceName",
        "backends[0].configuration.port: is only allowed with serviceName"
      ])
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", serviceName: "gw.svc", auth: bearer }))).toEqual([
        "backends[0].configuration.endpoint: exactly one of endpoint or serviceName is required"
      ])
      expect(problems(withConfiguration({ serviceName: "gw.svc", scheme: "ftp", rootCertificatePath: "/ca.pem", auth: bearer }))).toEqual([
        `backends[0].configuration.scheme: Expected "http"`,
        `backends[0].configuration.scheme: Expected "https"`
      ])
    })

    it("accepts only the unauthenticated and bearerTokenFile auth modes, the file by absolute path", () => {
      expect(gateway({ endpoint: "gw:7000", auth: { mode: "unauthenticated" }, insecureTransport: "network-policy" }).auth)
        .toEqual({ mode: "unauthenticated" })
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", auth: { mode: "bearerTokenFile", path: "token" } })))
        .toEqual(["backends[0].configuration.auth.path: must be an absolute path"])
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", auth: { mode: "bearerTokenFile" } })))
        .toEqual(["backends[0].configuration.auth.path: is missing"])
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", auth: { mode: "bearerToken", token: "sk-inline" } })))
        .toEqual([`backends[0].configuration.auth.mode: Expected "unauthenticated" | "bearerTokenFile"`])
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", auth: { ...bearer, token: "sk-inline" } })))
        .toEqual(["backends[0].configuration.auth.token: is unexpected, expected: \"mode\" | \"path\""])
    })

    it("bounds requestTimeoutMs to 1000-30000 (default 10000)", () => {
      const base = { endpoint: "https://gw.example.com", auth: bearer }
      expect(gateway(base).requestTimeoutMs).toBe(10000)
      expect(gateway({ ...base, requestTimeoutMs: 1000 }).requestTimeoutMs).toBe(1000)
      expect(gateway({ ...base, requestTimeoutMs: 30000 }).requestTimeoutMs).toBe(30000)
      for (const requestTimeoutMs of [999, 30001, 1500.5, "2000"]) {
        expect(problems(withConfiguration({ ...base, requestTimeoutMs })).length).toBe(1)
        expect(problems(withConfiguration({ ...base, requestTimeoutMs }))[0]).toMatch(/^backends\[0\]\.configuration\.requestTimeoutMs: /)
      }
    })

    it("requires insecureTransport network-policy exactly when TLS or bearer authentication is missing", () => {
      const required = `backends[0].configuration.insecureTransport: must be "network-policy" when the connection lacks TLS or bearer authentication`
      const refused = "backends[0].configuration.insecureTransport: is only allowed when the connection lacks TLS or bearer authentication"
      // TLS without bearer, bearer without TLS, neither: required.
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", auth: { mode: "unauthenticated" } }))).toEqual([required])
      expect(problems(withConfiguration({ serviceName: "gw.svc", auth: bearer }))).toEqual([required])
      expect(problems(withConfiguration({ serviceName: "gw.svc", scheme: "http", auth: { mode: "unauthenticated" } }))).toEqual([required])
      expect(gateway({ serviceName: "gw.svc", auth: bearer, insecureTransport: "network-policy" }).insecureTransport).toBe("network-policy")
      // TLS and bearer: refused, whichever way TLS is chosen.
      expect(problems(withConfiguration({ serviceName: "gw.svc", rootCertificatePath: "/ca.pem", auth: bearer, insecureTransport: "network-policy" })))
        .toEqual([refused])
      expect(problems(withConfiguration({ serviceName: "gw.svc", scheme: "https", auth: bearer, insecureTransport: "network-policy" })))
        .toEqual([refused])
      expect(problems(withConfiguration({ endpoint: "gw:7000", auth: bearer, insecureTransport: "tls" })).length).toBe(1)
    })

    it("rejects inline keys and upstream URLs in the Backend", () => {
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", auth: bearer, bearerToken: "sk-inline" })))
        .toEqual([expect.stringMatching(/^backends\[0\]\.configuration\.bearerToken: is unexpected/)])
      expect(problems(withConfiguration({ endpoint: "https://gw.example.com", auth: bearer, upstreamUrl: "https://api.example.com" })))
        .toEqual([expect.stringMatching(/^backends\[0\]\.configuration\.upstreamUrl: is unexpected/)])
    })
  })
  // end credential-sources

  it.effect("stops on a missing file, naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(loadInstallationConfig(Option.some("/nonexistent/installation.json")))
      expect(error).toBeInstanceOf(InstallationConfigError)
      expect(formatStartupError(error)).toBe(
        "SVC_INSTALLATION_CONFIG (/nonexistent/installation.json): cannot read: file not found"
      )
    }))

  it.effect("stops on invalid JSON with the position, without quoting the content", () =>
    Effect.gen(function*() {
      const file = writeFile(`{\n  "providers": { "codehost": { "clientSecret": "gh-secret-123456" ]`)
      const error = yield* Effect.flip(loadInstallationConfig(Option.some(file)))
      const message = formatStartupError(error)
      expect(message).toMatch(new RegExp(`^SVC_INSTALLATION_CONFIG \\(${file}\\): is not valid JSON at line 2, column \\d+$`))
      expect(message).not.toContain("gh-secret-123456")
    }))

  it.effect("loads a valid file", () =>
    Effect.gen(function*() {
      const file = writeFile(JSON.stringify({ drivers: { compute: { id: "local" } }, backends: [] }))
      const config = yield* loadInstallationConfig(Option.some(file))
      expect(config).toEqual(defaultInstallationConfig)
    }))
})
