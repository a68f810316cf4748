/**
 * The real API (every group of SvcApi, the real pipeline and authentication) on a loopback port
 * over a fresh migrated database, with helpers to call it as a given caller.
 */
import { SqlClient } from "@effect/sql"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, type InstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect, Layer } from "effect"
import { expect } from "vitest"
import { migratedDatabaseLayer } from "../../../../testing/database.js"
import {
  bindInstallationAdmin,
  bindRole,
  createAccount,
  createNamespaceRow,
  createServicePrincipal,
  insertServiceKey,
  signedInSession
} from "../../../../testing/identity.js"
import { call, REQUEST_ID, serveForTest } from "../../../../testing/server.js"
import { testSecretDriver, unavailableCompute } from "../../../../testing/drivers.js"
import type { ComputeDriver } from "@svc/core/drivers/compute"

export const ORIGIN = "http://127.0.0.1:8080"
const settings = AuthSettings.from({ baseUrl: ORIGIN, production: false })

/**
 * The whole API over a fresh database, with the Compute Driver given (main.ts selects it from the
 * configuration); the SqlClient and the Secret Driver stay available to seed, inspect, and share
 * with a worker.
 */
export const apiTestLayerWith = <R>(
  compute: Layer.Layer<ComputeDriver, never, R>,
  installation: InstallationConfig = defaultInstallationConfig,
  { development = true }: { readonly development?: boolean } = {}
) =>
  serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development, maxBodyBytes: 448 * 1024 })).pipe(
    Layer.provide(compute),
    Layer.provideMerge(testSecretDriver),
    Layer.provide(Layer.succeed(AuthSettings, settings)),
    Layer.provide(Layer.succeed(InstallationConfiguration, installation)),
    Layer.provideMerge(migratedDatabaseLayer)
  )

/** The whole API without a Compute host (live Agent operations answer 503). */
export const apiTestLayer = (installation: InstallationConfig = defaultInstallationConfig, options?: { readonly development?: boolean }) =>
  apiTestLayerWith(unavailableCompute, installation, options)

export type Headers = Record<string, string>

export const withKey = (key: string): Headers => ({ "x-api-key": key })
/** A browser-like session request: the cookie and the trusted Origin (mutations need it). */
export const withSession = (token: string): Headers => ({ cookie: `${settings.cookieName}=${token}`, origin: ORIGIN })
export const anonymous: Headers = {}

export type Result = Awaited<ReturnType<typeof call>>

export const send = (baseUrl: string, method: string, path: string, headers: Headers, body?: unknown) =>
  Effect.promise(() =>
    call(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
  )

export const expectError = (result: Result, status: number, code: string, details?: ReadonlyArray<unknown>) => {
  expect({ status: result.status, body: result.body }).toEqual({
    status,
    body: {
      error: details === undefined
        ? expect.objectContaining({ code, message: expect.any(String) })
        : { code, message: expect.any(String), details },
      meta: { requestId: expect.stringMatching(REQUEST_ID) }
    }
  })
}

export const expectData = (result: Result, status: number) => {
  expect(result.status, result.text).toBe(status)
  expect(result.body.meta.requestId).toMatch(REQUEST_ID)
  return result.body.data
}

/** `namespace-viewer` bound to `principalId` on one resource of the Namespace through the API, as `headers`. */
export const bindViewerOn = (baseUrl: string, headers: Headers, namespaceId: string, principalId: string, resource: { kind: string; id: string }) =>
  Effect.map(
    send(baseUrl, "POST", `/namespaces/${namespaceId}/iam/access-bindings`, headers, {
      principalId,
      roleId: BuiltinRoles.namespaceViewer.id,
      resource
    }),
    (created) => expectData(created, 201)
  )

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A human Installation administrator with a session. */
export const seedAdmin = (email: string) =>
  Effect.gen(function* () {
    const account = yield* createAccount(email)
    yield* bindInstallationAdmin(account.principalId)
    const session = yield* signedInSession(account.userId)
    return { ...account, headers: withSession(session.token) }
  })

/** A human without any grant, with a session. */
export const seedHuman = (email: string) =>
  Effect.gen(function* () {
    const account = yield* createAccount(email)
    const session = yield* signedInSession(account.userId)
    return { ...account, headers: withSession(session.token) }
  })

/** A service principal (Installation or Namespace scope) with a valid key. */
export const seedServiceKey = (name: string, namespaceId: string | null = null) =>
  Effect.gen(function* () {
    const principalId = yield* createServicePrincipal(name, namespaceId)
    const { id, key } = yield* insertServiceKey(principalId, { namespaceId })
    return { principalId, keyId: id, key, headers: withKey(key) }
  })

export const seedNamespace = (name: string) => createNamespaceRow(name)

const CREATOR_ROLE = "role_00000000-0000-4000-8000-0000000000cc"

/** A human whose only grant is a Role holding `namespace:create`, bound on the Installation. */
export const seedNamespaceCreator = (email: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO roles (id, namespace_id, name, permissions)
      VALUES (${CREATOR_ROLE}, NULL, 'namespace-creator', ARRAY['namespace:create'])
      ON CONFLICT (id) DO NOTHING
    `
    const creator = yield* seedHuman(email)
    yield* bindRole(creator.principalId, CREATOR_ROLE, { kind: "installation" })
    return creator
  })

/** A refused `POST /namespaces`: the error, and no Namespace row with that name (not even a tombstone). */
export const expectNamespaceRefused = (result: Result, status: number, code: string, name: string) =>
  Effect.gen(function* () {
    expectError(result, status, code)
    const sql = yield* SqlClient.SqlClient
    expect(yield* sql`SELECT id FROM namespaces WHERE name = ${name}`).toEqual([])
  })

export const auditKinds = (resourceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ kind: string; actor_principal_id: string | null; details: unknown }>`
      SELECT kind, actor_principal_id, details FROM audit_events WHERE resource_id = ${resourceId} ORDER BY id
    `
    return rows
  })

/**
 * Polls `read` every 50 ms until `done` holds; dies with the last value after 20 s. A real timer:
 * it.effect runs on the TestClock, which Effect.sleep would wait on forever.
 */
export const until = <A>(read: Effect.Effect<A>, done: (a: A) => boolean) =>
  Effect.gen(function* () {
    const deadline = Date.now() + 20_000
    for (;;) {
      const value = yield* read
      if (done(value)) return value
      if (Date.now() > deadline) return yield* Effect.dieMessage(`not reached: ${JSON.stringify(value)}`)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
  })
