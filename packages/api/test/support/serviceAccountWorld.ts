/**
 * The real API with the model_accounts Backend and its ServiceAccount Driver selected, the Driver
 * pointed at a loopback vendor Admin API through the `SVC_DEV_UPSTREAMS` mapping, and helpers
 * to call the service-account routes.
 */
import { SqlClient } from "@effect/sql"
import { decodeInstallationConfig, type InstallationConfig } from "@svc/core/config"
import { MODEL_VENDOR_ADMIN_ORIGIN, selectServiceAccountDriver, ServiceAccountDriver } from "@svc/core/drivers/serviceAccount"
import { RoleId } from "@svc/core/schema"
import { Context, Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type ModelVendorAdmin, startModelVendorAdmin } from "../../../../testing/modelVendorAdmin.js"
import { LogCapture } from "../../../../testing/server.js"
import { apiTestLayer, expectData, type Headers, seedNamespace, send } from "./iamServer.js"

export const WORKSPACE_ID = "0f8fad5b-d9cb-469f-a165-70867728950e"
export const ADMIN_KEY = "vendor-admin-key-0123456789"
/** Short enough that the slow-answer test stays quick; the production default is 30 s. */
export const TEST_TIMEOUT_MS = 1000

export class Vendor extends Context.Tag("test/Vendor")<Vendor, ModelVendorAdmin & { readonly keyFile: string }>() {}

export const managedInstallation = (keyFile: string, compute: "local" | "kubernetes" = "local"): InstallationConfig =>
  Either.getOrThrow(decodeInstallationConfig("test", {
    drivers: { compute: { id: compute }, serviceAccount: { id: "modelvendor" } },
    backends: [{
      id: "accounts-main",
      type: "model_accounts",
      configuration: { workspaceId: WORKSPACE_ID, apiKeyPath: keyFile, credentialTtlSeconds: 3600 },
      drivers: { serviceAccount: "modelvendor" }
    }]
  }))

export const vendorKeyFile = () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-vendor-key-")), "admin-key")
  fs.writeFileSync(file, `${ADMIN_KEY}\n`)
  return file
}

/** The API over a fresh database, its ServiceAccount Driver reaching the loopback vendor. */
export const managedApiLayer = (compute: "local" | "kubernetes" = "local") => {
  const file = vendorKeyFile()
  const installation = managedInstallation(file, compute)
  const vendor = Layer.scoped(
    Vendor,
    Effect.acquireRelease(
      Effect.promise(() => startModelVendorAdmin({ adminKey: ADMIN_KEY, workspaceId: WORKSPACE_ID })),
      (v) => Effect.promise(() => v.close())
    ).pipe(Effect.map((v) => ({ ...v, keyFile: file })))
  )
  const driver = Layer.unwrapEffect(Effect.map(Vendor, (v) =>
    selectServiceAccountDriver(installation, new Map([[MODEL_VENDOR_ADMIN_ORIGIN, v.origin]]), TEST_TIMEOUT_MS)
  ))
  return apiTestLayer(installation).pipe(Layer.provide(driver), Layer.provideMerge(vendor), Layer.provideMerge(LogCapture.layer))
}

export { ServiceAccountDriver }

/** An account's row states and how many sealed credential records it has. */
export const rows = (id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* sql<{ state: string }>`SELECT state FROM service_accounts WHERE id = ${id}`
    const sealed = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM service_account_credentials WHERE service_account_id = ${id}`
    return { accounts: accounts.map((a) => a.state), sealed: sealed[0]!.n }
  })

export const accountsPath = (namespaceId: string) => `/namespaces/${namespaceId}/service-accounts`

export const createAccount = (baseUrl: string, headers: Headers, namespaceId: string, name: string) =>
  send(baseUrl, "POST", accountsPath(namespaceId), headers, { name })

/** Raw bodies of `POST .../credentials` that are not `{}`, and the details each is refused with (400 `INVALID_REQUEST`). */
export const notEmptyBodies: ReadonlyArray<readonly [string, ReadonlyArray<{ readonly code: string; readonly path: string }>]> = [
  [JSON.stringify({ x: 1 }), [{ code: "UNKNOWN_FIELD", path: "/x" }]],
  [JSON.stringify({ kind: "access_token", ttlSeconds: 60 }), [{ code: "UNKNOWN_FIELD", path: "/kind" }, { code: "UNKNOWN_FIELD", path: "/ttlSeconds" }]],
  [JSON.stringify({ " ": null }), [{ code: "UNKNOWN_FIELD", path: "/ " }]],
  ["\"abc\"", [{ code: "INVALID_TYPE", path: "" }]],
  ["5", [{ code: "INVALID_TYPE", path: "" }]],
  ["true", [{ code: "INVALID_TYPE", path: "" }]],
  ["[]", [{ code: "INVALID_TYPE", path: "" }]],
  ["null", [{ code: "INVALID_TYPE", path: "" }]]
]

export const issue = (baseUrl: string, headers: Headers, namespaceId: string, id: string) =>
  send(baseUrl, "POST", `${accountsPath(namespaceId)}/${id}/credentials`, headers, {})

/** A Namespace role with exactly `permissions`. */
export const roleWith = (namespaceId: string, ...permissions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = RoleId.make()
    yield* sql`
      INSERT INTO roles (id, namespace_id, name, permissions)
      VALUES (${id}, ${namespaceId}, ${`r-${id.slice(-12)}`}, string_to_array(${permissions.join(",")}, ','))
    `
    return id
  })

/** A Namespace with an agent Configuration, a ready managed account and one without a credential. */
export const world = (baseUrl: string, admin: Headers, name: string) =>
  Effect.gen(function* () {
    const ns = yield* seedNamespace(name)
    const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin, { kind: "agent", values: {} }), 201)
    const ready = expectData(yield* createAccount(baseUrl, admin, ns, "ready"), 201)
    expectData(yield* issue(baseUrl, admin, ns, ready.id), 201)
    const bare = expectData(yield* createAccount(baseUrl, admin, ns, "bare"), 201)
    const agents = (headers: Headers, body: Record<string, unknown>) =>
      send(baseUrl, "POST", `/namespaces/${ns}/agents`, headers, { name: "bot", configurationId: configuration.id, ...body })
    return { ns, configurationId: configuration.id as string, ready: ready.id as string, bare: bare.id as string, agents }
  })

export const binding = (serviceAccountId: string) => ({ method: "provider_service_account", serviceAccountId })
export const dedicated = (serviceAccountId: string) =>
  ({ executionMode: "dedicated", backendId: "accounts-main", harnessAuth: binding(serviceAccountId) })

