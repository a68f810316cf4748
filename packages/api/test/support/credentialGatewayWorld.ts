/**
 * An Installation with the `sandbox_gateway` Backend pointing at a loopback Credential Gateway
 * (testing/credentialGateway.ts), the bearer token in a file, and helpers the credential-source
 * tests share.
 */
import { SqlClient } from "@effect/sql"
import { decodeInstallationConfig, type InstallationConfig, type SandboxGatewayConfiguration } from "@svc/core/config"
import { RoleId } from "@svc/core/schema"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { LoopbackCredentialGateway } from "../../../../testing/credentialGateway.js"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../../testing/identity.js"
import { TestServer } from "../../../../testing/server.js"
import { expectData, seedAdmin, seedNamespace, send, withKey } from "./iamServer.js"

export const GATEWAY_TOKEN = "gw-bearer-test-token"

/** The Installation: Compute `compute` with a Credential Gateway reached at the loopback one (and its `egress`, when given). */
export const gatewayInstallation = (
  gateway: LoopbackCredentialGateway,
  compute: "local" | "kubernetes" = "local",
  egress?: string
): InstallationConfig => {
  const tokenFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-cred-gw-")), "token")
  fs.writeFileSync(tokenFile, GATEWAY_TOKEN)
  const decoded = decodeInstallationConfig("/test/installation.json", {
    drivers: { compute: { id: compute }, sandbox: { id: "openshell" }, credentialGateway: { id: "openshell" } },
    backends: [{
      id: "sandboxes",
      type: "sandbox_gateway",
      configuration: {
        endpoint: gateway.endpoint,
        auth: { mode: "bearerTokenFile", path: tokenFile },
        requestTimeoutMs: 1000,
        insecureTransport: "network-policy",
        ...(egress === undefined ? {} : { egress })
      },
      drivers: { sandbox: "openshell", credentialGateway: "openshell" }
    }]
  })
  if (Either.isLeft(decoded)) throw decoded.left
  return decoded.right
}

export const gatewayConfiguration = (installation: InstallationConfig): SandboxGatewayConfiguration => {
  const backend = installation.backends.find((b) => b.type === "sandbox_gateway")
  if (backend?.type !== "sandbox_gateway") throw new Error("no sandbox_gateway Backend")
  return backend.configuration
}

/** A Namespace-scoped key whose principal holds exactly `permissions` on the Namespace. */
export const keyWithPermissions = (namespaceId: string, name: string, permissions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const role = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${namespaceId}, ${name}, ${permissions})`
    const principal = yield* createServicePrincipal(name, namespaceId)
    yield* bindRole(principal, role, { kind: "namespace", id: namespaceId })
    return { principalId: principal, headers: withKey((yield* insertServiceKey(principal, { namespaceId })).key) }
  })

export const sourceRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ id: string; state: string }>`SELECT id, state FROM credential_sources ORDER BY created_at`
})

/**
 * A Namespace with a Secret, a ready credential source registered from it, and a Configuration
 * of kind `agent`; `call` is relative to the Namespace, `bound` an Agent body binding a source.
 */
export const harnessWorld = (name: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`${name}@example.com`)
    const ns = yield* seedNamespace(name)
    const call = (method: string, path: string, body?: unknown, headers = admin.headers) =>
      send(baseUrl, method, `/namespaces/${ns}/${path}`, headers, body)
    const secret = expectData(yield* call("POST", "secrets", { name: "vendor-key", value: "sk-harness-0123456789" }), 201)
    const source = expectData(yield* call("POST", "credential-sources", {
      name: "vendor",
      type: "modelvendor",
      secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } }
    }), 201)
    const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: { agents: {} } }), 201)
    const bound = (sourceId: string) => ({
      name: `bot-${crypto.randomUUID().slice(0, 8)}`,
      configurationId: configuration.id,
      executionMode: "dedicated",
      harnessAuth: { method: "credential_source", sourceId }
    })
    return { admin, ns, call, secret, source, configuration, bound }
  })
