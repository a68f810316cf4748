import { expect } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { BuiltinRoles } from "@svc/core/iam"
import { PrincipalId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { migratedDatabaseLayer } from "../../../../testing/database.js"
import {
  bindInstallationAdmin,
  bindRole,
  createAccount,
  createNamespaceRow,
  createNarrowAdminRole,
  createServicePrincipal,
  insertServiceKey,
  signedInSession
} from "../../../../testing/identity.js"
import { call, LogCapture, REQUEST_ID, serveForTest, TestServer } from "../../../../testing/server.js"
import { testSecretDriver, unavailableCompute } from "../../../../testing/drivers.js"

/** The service-key suite's server, identities, request recorder and fault injection. */
export const ORIGIN = "http://127.0.0.1:8080"
export const settings = AuthSettings.from({ baseUrl: ORIGIN, production: false })

export const app = serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 })).pipe(
  Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
  Layer.provide(Layer.succeed(AuthSettings, settings)),
  // Other groups of the API read the Installation configuration.
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provideMerge(LogCapture.layer),
  Layer.provideMerge(migratedDatabaseLayer)
)

export type Result = Awaited<ReturnType<typeof call>>

/** Every response text of this file, for the scan that keys appear only where they must. */
export const responses: Array<string> = []
/** Every exchange of this file, checked against the OpenAPI document at the end. */
export const exchanges: Array<{ readonly method: string; readonly path: string; readonly result: Result }> = []

export type Credential = { readonly cookie: string } | { readonly apiKey: string } | undefined

export const headersFor = (credential: Credential): Record<string, string> =>
  credential === undefined
    ? {}
    : "cookie" in credential
    ? { cookie: `${settings.cookieName}=${credential.cookie}`, origin: ORIGIN }
    : { "x-api-key": credential.apiKey }

export const request = (path: string, init: { method: string; credential?: Credential; body?: unknown; contentType?: string | null }) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const headers: Record<string, string> = headersFor(init.credential)
    if (init.body !== undefined && init.contentType !== null) headers["content-type"] = init.contentType ?? "application/json"
    const result = yield* Effect.promise(() =>
      call(`${baseUrl}${path}`, {
        method: init.method,
        headers,
        ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) })
      })
    )
    responses.push(result.text)
    const template = path === "/api/auth/service-keys" ? path : "/api/auth/service-keys/{keyId}"
    exchanges.push({ method: init.method.toLowerCase(), path: template, result })
    return result
  })

export const issue = (credential: Credential, body: unknown) =>
  request("/api/auth/service-keys", { method: "POST", credential, body })

export const revoke = (credential: Credential, keyId: string) =>
  request(`/api/auth/service-keys/${encodeURIComponent(keyId)}`, { method: "DELETE", credential })

export const expectError = (result: Result, status: number, code: string, details?: ReadonlyArray<unknown>) => {
  expect(result.status, result.text).toBe(status)
  expect(result.body).toEqual({
    error: { code, message: expect.any(String), ...(details === undefined ? {} : { details }) },
    meta: { requestId: expect.stringMatching(REQUEST_ID) }
  })
  expect(result.text).not.toMatch(/svck_/)
}

export const UNKNOWN_KEY = "key_00000000-0000-4000-8000-000000000000"

/** The identities every test uses, seeded once into the file's database. */
export const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const admin = yield* createAccount("admin@example.com")
  yield* bindInstallationAdmin(admin.principalId)
  const adminSession = yield* signedInSession(admin.userId)

  const reader = yield* createAccount("reader@example.com")
  const readerSession = yield* signedInSession(reader.userId)

  // An administrator of the Installation with nothing else: cannot issue for broader principals.
  const narrowRole = yield* createNarrowAdminRole
  const narrow = yield* createAccount("narrow@example.com")
  yield* bindRole(narrow.principalId, narrowRole, { kind: "installation" })
  const narrowSession = yield* signedInSession(narrow.userId)

  const ns = yield* createNamespaceRow("team-a")
  const otherNs = yield* createNamespaceRow("team-b")
  const automation = yield* createServicePrincipal("automation")
  yield* bindInstallationAdmin(automation)
  const bare = yield* createServicePrincipal("bare")
  const nsPrincipal = yield* createServicePrincipal("team-a-bot", ns)
  yield* bindRole(nsPrincipal, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
  const agent = PrincipalId.make()
  yield* sql`INSERT INTO principals (id, kind, namespace_id, name) VALUES (${agent}, 'agent', ${ns}, 'an-agent')`

  const nsKey = yield* insertServiceKey(nsPrincipal, { namespaceId: ns })
  return {
    admin,
    adminCookie: { cookie: adminSession.token },
    readerCookie: { cookie: readerSession.token },
    narrowCookie: { cookie: narrowSession.token },
    ns,
    otherNs,
    automation,
    bare,
    nsPrincipal,
    agent,
    nsKey: { apiKey: nsKey.key }
  }
})

let seeded: Effect.Effect.Success<typeof seed> | undefined
export const identities = Effect.suspend(() => (seeded ? Effect.succeed(seeded) : Effect.tap(seed, (s) => (seeded = s))))

// Other groups' schemas may repeat `$id`s; they are irrelevant to these paths.
export const withoutIds = (node: unknown): unknown =>
  Array.isArray(node)
    ? node.map(withoutIds)
    : typeof node === "object" && node !== null
    ? Object.fromEntries(Object.entries(node).filter(([key]) => key !== "$id").map(([key, value]) => [key, withoutIds(value)]))
    : node

export const keyCount = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ count: number }>`SELECT count(*)::int AS count FROM service_keys`.pipe(Effect.map((rows) => rows[0]!.count))
).pipe(Effect.orDie)

/** Fault injection: audit records of `kind` cannot be written until `healAudits`. */
export const failAudits = (kind: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function* () {
      yield* sql.unsafe(`
        CREATE OR REPLACE FUNCTION test_fail_audit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.kind = '${kind}' THEN RAISE EXCEPTION 'audit storage unavailable'; END IF;
          RETURN NEW;
        END $$`)
      yield* sql.unsafe(`
        CREATE TRIGGER test_fail_audit BEFORE INSERT ON audit_events
        FOR EACH ROW EXECUTE FUNCTION test_fail_audit()`)
    })
  ).pipe(Effect.orDie)

export const healAudits = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`DROP TRIGGER IF EXISTS test_fail_audit ON audit_events`)
).pipe(Effect.orDie)
