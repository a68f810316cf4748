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
import { withKey } from "./iamServer.js"

export const GATEWAY_TOKEN = "gw-bearer-test-token"

/** The Installation: Compute `compute` with a Credential Gateway reached at the loopback one. */
export const gatewayInstallation = (gateway: LoopbackCredentialGateway, compute: "local" | "kubernetes" = "local"): InstallationConfig => {
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
        insecureTransport: "network-policy"
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
