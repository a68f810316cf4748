import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { capabilitiesOf, diagnosticsOf } from "@svc/api"
import { detectConfinement } from "@svc/core/drivers/compute"
import { decodeInstallationConfig, defaultInstallationConfig } from "@svc/core/config"
import { BuiltinRoles } from "@svc/core/iam"
import { InstallationId } from "@svc/core/schema"
import { Effect, Either } from "effect"
import { bindRole } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  anonymous,
  apiTestLayer,
  expectData,
  expectError,
  seedAdmin,
  seedHuman,
  seedNamespace,
  seedServiceKey,
  send
} from "./support/iamServer.js"

/** A configuration with every Backend type, the Drivers they need, and secrets referenced by path. */
const configured = Either.getOrThrow(decodeInstallationConfig("test", {
  drivers: {
    compute: { id: "kubernetes" },
    plugin: { id: "bundled" },
    serviceAccount: { id: "modelvendor" },
    sandbox: { id: "gateway" },
    credentialGateway: { id: "gateway" },
    repo: { id: "codehost", controlSocket: "/run/svc/control.sock", sessionDurationSeconds: 3600, publicCaPath: "/etc/svc/ca.pem" }
  },
  backends: [
    {
      id: "accounts-main",
      type: "model_accounts",
      configuration: { workspaceId: "0f8fad5b-d9cb-469f-a165-70867728950e", apiKeyPath: "/secrets/admin-key" },
      drivers: { serviceAccount: "modelvendor" }
    },
    { id: "code", type: "code_host", configuration: { registryPath: "/etc/svc/registry.json" }, drivers: { repo: "codehost" } },
    {
      id: "sandboxes",
      type: "sandbox_gateway",
      configuration: { endpoint: "https://sandbox.internal:8443", auth: { mode: "bearerTokenFile", path: "/secrets/sandbox-token" } },
      drivers: { sandbox: "gateway", credentialGateway: "gateway" }
    }
  ]
}))

describe("capabilities from the selected Drivers", () => {
  it("local Compute and no Plugin Driver: embedded only, no pluginPolicies, no nativeWorkers", () => {
    expect(capabilitiesOf(defaultInstallationConfig)).toEqual({ agentProvisioning: { executionModes: ["embedded"] } })
  })
  it("kubernetes Compute and a Plugin Driver: both modes, nativeWorkers and pluginPolicies", () => {
    const capabilities = capabilitiesOf(configured)
    expect(capabilities.agentProvisioning.executionModes).toEqual(["embedded", "dedicated"])
    expect(capabilities).toHaveProperty("nativeWorkers")
    expect(capabilities).toHaveProperty("pluginPolicies")
  })
})

describe("Installation diagnostics: gateway confinement (DESIGN §17)", () => {
  it.effect("a service that is not root says its gateways share its user (a warning)", () =>
    Effect.gen(function* () {
      const confinement = yield* Effect.promise(() => detectConfinement(1000))
      expect(confinement).toEqual({ kind: "shared-user" })
      expect(diagnosticsOf(defaultInstallationConfig, confinement)).toEqual([{
        name: "gateway.confinement",
        status: "warn",
        message: expect.stringContaining("runs as the service's own user")
      }])
    }))
  it.effect("as root with bubblewrap: each gateway is its own user in a sandbox (pass); as root without setpriv: fail", () =>
    Effect.sync(() => {
      const [sandboxed] = diagnosticsOf(defaultInstallationConfig, { kind: "bubblewrap", bwrap: "/usr/bin/bwrap", setpriv: "/usr/bin/setpriv" })!
      expect(sandboxed).toMatchObject({ name: "gateway.confinement", status: "pass" })
      expect(diagnosticsOf(defaultInstallationConfig, { kind: "pid-namespace", unshare: "/usr/bin/unshare", setpriv: "/usr/bin/setpriv" })![0]!.status).toBe("warn")
      expect(diagnosticsOf(defaultInstallationConfig, { kind: "unavailable" })![0]!.status).toBe("fail")
    }))
  it("other Compute Drivers: no diagnostics (their gateways do not run on this host)", () => {
    expect(diagnosticsOf(configured, { kind: "shared-user" })).toBeUndefined()
  })
})

describe("GET /installation and GET /backends", () => {
  it.layer(apiTestLayer(configured), { timeout: 120_000 })((it) => {
    it.effect("an administrator reads the capabilities, the Installation id once bootstrapped, and the Backend inventory without settings", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("inst-admin@example.com")
        const before = expectData(yield* send(baseUrl, "GET", "/installation", admin.headers), 200)
        expect(before).toEqual({ capabilities: capabilitiesOf(configured) })
        const sql = yield* SqlClient.SqlClient
        const id = InstallationId.make()
        yield* sql`INSERT INTO installation (id, bootstrapped_at) VALUES (${id}, now())`
        expect(expectData(yield* send(baseUrl, "GET", "/installation", admin.headers), 200)).toEqual({ id, capabilities: capabilitiesOf(configured) })

        const backends = yield* send(baseUrl, "GET", "/backends", admin.headers)
        expect(expectData(backends, 200)).toEqual([
          { id: "accounts-main", type: "model_accounts" },
          { id: "code", type: "code_host" },
          { id: "sandboxes", type: "sandbox_gateway" }
        ])
        for (const secretish of ["/secrets", "0f8fad5b", "registry.json", "sandbox.internal", "codehost", "modelvendor"]) {
          expect(backends.text).not.toContain(secretish)
        }
      }))

    it.effect("401 anonymous; installation:read is enough for /installation, /backends needs administer; Namespace keys are 403", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("inst-ns")
        const nobody = yield* seedHuman("inst-nobody@example.com")
        const nsKey = yield* seedServiceKey("inst-ns-key", ns)
        yield* bindRole(nsKey.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
        for (const path of ["/installation", "/backends"]) {
          expectError(yield* send(baseUrl, "GET", path, anonymous), 401, "UNAUTHENTICATED")
          expectError(yield* send(baseUrl, "GET", path, nobody.headers), 403, "FORBIDDEN")
          expectError(yield* send(baseUrl, "GET", path, nsKey.headers), 403, "FORBIDDEN")
          expectError(yield* send(baseUrl, "GET", path, { authorization: "Bearer x" }), 401, "UNAUTHENTICATED")
        }
        // A Role holding only installation:read (bound on the Installation) reads /installation.
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES ('role_00000000-0000-4000-8000-0000000000aa', NULL, 'installation-reader', ARRAY['installation:read'])`
        const reader = yield* seedHuman("inst-reader@example.com")
        yield* bindRole(reader.principalId, "role_00000000-0000-4000-8000-0000000000aa", { kind: "installation" })
        expectData(yield* send(baseUrl, "GET", "/installation", reader.headers), 200)
        expectError(yield* send(baseUrl, "GET", "/backends", reader.headers), 403, "FORBIDDEN")
      }))
  })
})

