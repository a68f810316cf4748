import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import {
  bindInstallationAdmin,
  bindRole,
  createAccount,
  createNamespaceRow,
  createServicePrincipal,
  insertServiceKey,
  PASSWORD,
  signedInSession
} from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  accountCount,
  accountsTestLayer,
  auditRows,
  auditText,
  cookieHeader,
  expectData,
  expectError,
  type Headers,
  type Result,
  seedAdministrator,
  seedMember,
  send as rawSend,
  setCookieOf,
  signIn
} from "./support/accountsServer.js"

const NEW_PASSWORD = "the new account's password"
const USER_ID = /^usr_[0-9a-f-]{36}$/
const PRINCIPAL_ID = /^prn_[0-9a-f-]{36}$/

// Every response of this file, for the final scan for secrets.
const responses: Array<string> = []
const secrets: Array<string> = [NEW_PASSWORD, PASSWORD]
const send = (baseUrl: string, method: string, path: string, headers: Headers = {}, body?: unknown) =>
  Effect.tap(rawSend(baseUrl, method, path, headers, body), (result: Result) => {
    responses.push(result.text, result.headers.get("set-cookie") ?? "")
  })

describe("accounts: POST /api/auth/accounts and account state", () => {
  it.layer(accountsTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("an administrator creates an enrolled account: 201 {email, id, name, principalId}, no grant, no session", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdministrator("admin1@example.test")
        secrets.push(admin.session.token)
        const result = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
          email: "New.Person@Example.TEST",
          password: NEW_PASSWORD,
          name: "New Person"
        })
        expectData(result, 201, {
          email: "new.person@example.test",
          id: expect.stringMatching(USER_ID),
          name: "New Person",
          principalId: expect.stringMatching(PRINCIPAL_ID)
        })
        expect(setCookieOf(result)).toBeNull()
        const { id, principalId } = result.body.data
        const bindings = yield* sql`SELECT 1 FROM access_bindings WHERE principal_id = ${principalId}`
        expect(bindings).toHaveLength(0)
        const audit = (yield* auditRows).filter((row) => row.kind === "account.created")
        expect(audit).toEqual([{
          kind: "account.created",
          outcome: "success",
          actor_principal_id: admin.account.principalId,
          resource_id: id,
          details: { principalId, grant: "none", codehost: false }
        }])
        // The account signs in with its password and reads as enrolled, version 1.
        expect((yield* signIn(baseUrl, "new.person@example.test", NEW_PASSWORD)).status).toBe(200)
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${id}`, admin.headers)
        expectData(read, 200, {
          disabled: false,
          methods: [{ methodId: expect.stringMatching(/^mth_/), providerId: "password", subject: "new.person@example.test" }],
          principalId,
          userId: id,
          version: 1
        })
      }))

    it.effect("with roleId: the Installation-scoped Role is bound and audited; name defaults to the email", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdministrator("admin2@example.test")
        const result = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
          email: "second-admin@example.test",
          password: NEW_PASSWORD,
          roleId: BuiltinRoles.installationAdmin.id
        })
        expect(result.status).toBe(201)
        expect(result.body.data.name).toBe("second-admin@example.test")
        const { id, principalId } = result.body.data
        const bindings = yield* sql<{ role_id: string; resource_kind: string }>`
          SELECT role_id, resource_kind FROM access_bindings WHERE principal_id = ${principalId}
        `
        expect(bindings).toEqual([{ role_id: BuiltinRoles.installationAdmin.id, resource_kind: "installation" }])
        const audit = (yield* auditRows).find((row) => row.kind === "account.created" && row.resource_id === id)
        expect(audit?.details).toEqual({ principalId, roleId: BuiltinRoles.installationAdmin.id, codehost: false })
      }))

    it.effect("409 RESOURCE_CONFLICT for a duplicate email (any case); 400 for an unknown or Namespace-scoped roleId", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin3@example.test")
        yield* createAccount("taken@example.test")
        const before = yield* accountCount
        const create = (body: unknown) => send(baseUrl, "POST", "/api/auth/accounts", admin.headers, body)
        expectError(yield* create({ email: "TAKEN@example.test", password: NEW_PASSWORD }), 409, "RESOURCE_CONFLICT")
        for (const roleId of ["role_00000000-0000-4000-8000-00000000ffff", "nonsense", BuiltinRoles.namespaceAdmin.id]) {
          expectError(yield* create({ email: "fresh@example.test", password: NEW_PASSWORD, roleId }), 400, "INVALID_REQUEST", [
            { code: "INVALID_VALUE", path: "/roleId" }
          ])
        }
        // codehost is not enabled on this Installation.
        expectError(
          yield* create({ email: "fresh@example.test", password: NEW_PASSWORD, codehost: { subject: "42" } }),
          409,
          "RESOURCE_CONFLICT"
        )
        expect(yield* accountCount).toBe(before)
      }))

    it.effect("the body is checked after authentication: 401 first, then 415 and 400 details", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin4@example.test")
        expectError(yield* send(baseUrl, "POST", "/api/auth/accounts", {}, { nonsense: true }), 401, "UNAUTHENTICATED")
        expectError(
          yield* send(baseUrl, "POST", "/api/auth/accounts", { "content-type": "text/plain" }, "x"),
          401,
          "UNAUTHENTICATED"
        )
        expectError(
          yield* send(baseUrl, "POST", "/api/auth/accounts", { ...admin.headers, "content-type": "text/plain" }, "x"),
          415,
          "UNSUPPORTED_MEDIA_TYPE"
        )
        expectError(
          yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
            email: "x@y.z",
            password: "short",
            name: "",
            codehost: { subject: "0123" },
            extra: 1
          }),
          400,
          "INVALID_REQUEST",
          [
            { code: "UNKNOWN_FIELD", path: "/extra" },
            { code: "INVALID_VALUE", path: "/password" },
            { code: "INVALID_VALUE", path: "/name" },
            { code: "INVALID_FORMAT", path: "/codehost/subject" }
          ]
        )
      }))

    it.effect("only a human Installation administrator with a trusted Origin: key 401, member 403, bad Origin 403", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin5@example.test")
        const member = yield* seedMember("member5@example.test")
        const servicePrincipal = yield* createServicePrincipal("admin-automation")
        yield* bindInstallationAdmin(servicePrincipal)
        const { key } = yield* insertServiceKey(servicePrincipal)
        const body = { email: "nobody5@example.test", password: NEW_PASSWORD }
        const before = yield* accountCount
        const keyRefused = yield* send(baseUrl, "POST", "/api/auth/accounts", { "x-api-key": key }, body)
        expectError(keyRefused, 401, "UNAUTHENTICATED")
        expect(keyRefused.body.error.message).toBe("This operation needs a human session, not a service key.")
        // A key is refused before the body is read (SPEC 7.2): not 400 for a bad body, nor 415 for another media type.
        expectError(yield* send(baseUrl, "POST", "/api/auth/accounts", { "x-api-key": key }, { ...body, password: "short" }), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", "/api/auth/accounts", { "x-api-key": key, "content-type": "text/plain" }, "x"), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", "/api/auth/recovery", { "x-api-key": key }, { userId: 7 }), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", "/api/auth/sign-out", { "x-api-key": key }), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", "/api/auth/accounts", member.headers, body), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "POST", "/api/auth/accounts", cookieHeader(admin.session.token), body), 403, "FORBIDDEN")
        expectError(
          yield* send(baseUrl, "POST", "/api/auth/accounts", { ...admin.headers, origin: "https://evil.example" }, body),
          403,
          "FORBIDDEN"
        )
        expect(yield* accountCount).toBe(before)
        // Reads: the same people, and an Origin, when sent, must be trusted.
        const path = `/api/auth/accounts/${member.account.userId}`
        expectError(yield* send(baseUrl, "GET", path, { "x-api-key": key }), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "GET", path), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "GET", path, member.headers), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", path, { ...admin.headers, origin: "https://evil.example" }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", path, { ...admin.headers, "sec-fetch-site": "cross-site" }), 403, "FORBIDDEN")
        expect((yield* send(baseUrl, "GET", path, cookieHeader(admin.session.token))).status).toBe(200)
        expectError(yield* send(baseUrl, "GET", "/api/auth/accounts/usr_missing", admin.headers), 404, "NOT_FOUND")
      }))

    it.effect("disable, enable, revoke: optimistic version, sessions revoked, audited", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin6@example.test")
        const target = yield* createAccount("target6@example.test")
        const targetSession = yield* signedInSession(target.userId)
        const post = (action: string, expectedVersion: unknown) =>
          send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/${action}`, admin.headers, { expectedVersion })
        const version = Effect.map(
          send(baseUrl, "GET", `/api/auth/accounts/${target.userId}`, admin.headers),
          (result) => result.body.data.version as number
        )
        expectError(yield* post("disable", 2), 409, "RESOURCE_CONFLICT")
        expectError(yield* post("disable", 0), 400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: "/expectedVersion" }])
        expectError(yield* post("disable", "1"), 400, "INVALID_REQUEST", [{ code: "INVALID_TYPE", path: "/expectedVersion" }])
        expectData(yield* post("disable", 1), 200, { userId: target.userId })
        expect(yield* version).toBe(2)
        expect((yield* send(baseUrl, "GET", `/api/auth/accounts/${target.userId}`, admin.headers)).body.data.disabled).toBe(true)
        expectError(yield* send(baseUrl, "GET", "/api/auth/session", cookieHeader(targetSession.token)), 401, "UNAUTHENTICATED")
        expectError(yield* signIn(baseUrl, target.email, PASSWORD), 401, "UNAUTHENTICATED")
        expectError(yield* post("enable", 1), 409, "RESOURCE_CONFLICT")
        expectData(yield* post("enable", 2), 200, { userId: target.userId })
        expect(yield* version).toBe(3)
        const fresh = yield* signIn(baseUrl, target.email, PASSWORD)
        expect(fresh.status).toBe(200)
        const freshToken = /svc\.session_token=([^;]+)/.exec(setCookieOf(fresh)!)![1]!
        secrets.push(freshToken, targetSession.token)
        expectData(yield* post("revoke", 3), 200, { userId: target.userId })
        expectError(yield* send(baseUrl, "GET", "/api/auth/session", cookieHeader(freshToken)), 401, "UNAUTHENTICATED")
        expectError(yield* post("enable", 4), 409, "RESOURCE_CONFLICT")
        expectError(yield* signIn(baseUrl, target.email, PASSWORD), 401, "UNAUTHENTICATED")
        const kinds = (yield* auditRows).filter((row) => row.resource_id === target.userId).map((row) => [row.kind, row.details["version"]])
        expect(kinds).toEqual([["account.disabled", 2], ["account.enabled", 3], ["account.revoked", 4]])
        expectError(
          yield* send(baseUrl, "POST", "/api/auth/accounts/usr_missing/disable", admin.headers, { expectedVersion: 1 }),
          404,
          "NOT_FOUND"
        )
      }))

    it.effect("an Installation administrator may disable, enable and revoke a namespace-admin account (issue 10 §4)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin7@example.test")
        const namespaceId = yield* createNamespaceRow("team-seven")
        const target = yield* createAccount("target7@example.test")
        yield* bindRole(target.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: namespaceId })
        const post = (action: string, expectedVersion: number) =>
          send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/${action}`, admin.headers, { expectedVersion })
        // Another Role, but every permission of it held on the Installation: the same rule as key issuance.
        expectData(yield* post("disable", 1), 200, { userId: target.userId })
        expectData(yield* post("enable", 2), 200, { userId: target.userId })
        expectData(yield* post("revoke", 3), 200, { userId: target.userId })
        const kinds = (yield* auditRows).filter((row) => row.resource_id === target.userId).map((row) => [row.kind, row.details["version"]])
        expect(kinds).toEqual([["account.disabled", 2], ["account.enabled", 3], ["account.revoked", 4]])
      }))

    it.effect("mutations need every grant of the target's Principal (403, audited) where the caller really lacks one", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const namespaceId = yield* createNamespaceRow("team-seven-b")
        const otherNamespace = yield* createNamespaceRow("team-seven-c")
        const target = yield* createAccount("target7b@example.test")
        yield* bindRole(target.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: namespaceId })
        const disable = (headers: Headers) =>
          send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/disable`, headers, { expectedVersion: 1 })
        // An administrator of the Installation whose Role has only `installation:administer`.
        const narrow = yield* seedMember("narrow7@example.test")
        const narrowRole = "role_7a000000-0000-4000-8000-000000000007"
        yield* sql`INSERT INTO roles (id, name, permissions) VALUES (${narrowRole}, 'administer-only', ARRAY['installation:administer'])`
        yield* bindRole(narrow.account.principalId, narrowRole, { kind: "installation" })
        expectError(yield* disable(narrow.headers), 403, "FORBIDDEN")
        // A full administrator with a Restriction inside the target's Namespace lacks that permission there.
        const restricted = yield* seedAdministrator("restricted7@example.test")
        yield* sql`
          INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
          VALUES ('rst_7', ${restricted.account.principalId}, 'agent:delete', 'namespace', ${namespaceId})
        `
        expectError(yield* disable(restricted.headers), 403, "FORBIDDEN")
        const denied = (yield* auditRows).filter((row) => row.kind === "authorization.denied" && row.resource_id === target.userId)
        expect(denied.map((row) => row.actor_principal_id)).toEqual([narrow.account.principalId, restricted.account.principalId])
        // A Restriction in another Namespace is clearly elsewhere: covered.
        const elsewhere = yield* seedAdministrator("elsewhere7@example.test")
        yield* sql`
          INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
          VALUES ('rst_7b', ${elsewhere.account.principalId}, 'agent:delete', 'namespace', ${otherNamespace})
        `
        expectData(yield* disable(elsewhere.headers), 200, { userId: target.userId })
        // The same Role on the same Namespace covers too.
        const peer = yield* seedAdministrator("peer7@example.test")
        yield* sql`DELETE FROM access_bindings WHERE principal_id = ${peer.account.principalId}`
        yield* bindRole(peer.account.principalId, narrowRole, { kind: "installation" })
        yield* bindRole(peer.account.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: namespaceId })
        expectData(
          yield* send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/enable`, peer.headers, { expectedVersion: 2 }),
          200,
          { userId: target.userId }
        )
        // A namespace-admin binding on another Namespace does not cover this one.
        const stranger = yield* seedMember("stranger7@example.test")
        yield* bindRole(stranger.account.principalId, narrowRole, { kind: "installation" })
        yield* bindRole(stranger.account.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: otherNamespace })
        expectError(
          yield* send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/revoke`, stranger.headers, { expectedVersion: 3 }),
          403,
          "FORBIDDEN"
        )
      }))

    it.effect("enrol is idempotent: created, then not created, version unchanged the second time", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdministrator("admin8@example.test")
        const target = yield* createAccount("target8@example.test")
        yield* sql`UPDATE accounts SET enrolled_at = NULL WHERE id = ${target.userId}`
        const enrol = send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/enrol`, admin.headers)
        expectData(yield* enrol, 200, { created: true, principalId: target.principalId, userId: target.userId, version: 2 })
        expectData(yield* enrol, 200, { created: false, principalId: target.principalId, userId: target.userId, version: 2 })
        expect((yield* signIn(baseUrl, target.email, PASSWORD)).status).toBe(200)
        expectError(yield* send(baseUrl, "POST", "/api/auth/accounts/usr_missing/enrol", admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/enrol`, cookieHeader(admin.session.token)), 403, "FORBIDDEN")
      }))

    it.effect("detach a method: version-guarded, 404 for a method of another account", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin9@example.test")
        const target = yield* createAccount("target9@example.test")
        const other = yield* createAccount("other9@example.test")
        const detach = (methodId: string, expectedVersion: number) =>
          send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/methods/${methodId}/detach`, admin.headers, { expectedVersion })
        expectError(yield* detach(target.methodId, 5), 409, "RESOURCE_CONFLICT")
        expectError(yield* detach(other.methodId, 1), 404, "NOT_FOUND")
        expectData(yield* detach(target.methodId, 1), 200, { userId: target.userId })
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${target.userId}`, admin.headers)
        expect(read.body.data).toMatchObject({ methods: [], version: 2 })
        expectError(yield* signIn(baseUrl, target.email, PASSWORD), 401, "UNAUTHENTICATED")
      }))

    it.effect("attaching an external identity while its provider is off is 409; subjects are validated", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin10@example.test")
        const target = yield* createAccount("target10@example.test")
        const attach = (provider: string, body: unknown) =>
          send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/providers/${provider}`, admin.headers, body)
        expectError(yield* attach("codehost", { expectedVersion: 1, subject: "12345" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* attach("idprovider", { expectedVersion: 1, subject: "user-1" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* attach("codehost", { expectedVersion: 1, subject: "0123" }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/subject" }
        ])
        expectError(yield* attach("codehost", { expectedVersion: 1, subject: "1".repeat(21) }), 400, "INVALID_REQUEST", [
          { code: "TOO_LONG", path: "/subject" }
        ])
        expectError(yield* attach("idprovider", { expectedVersion: 1, subject: "has space" }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/subject" }
        ])
        expectError(yield* attach("idprovider", { expectedVersion: 1, subject: "x".repeat(256) }), 400, "INVALID_REQUEST", [
          { code: "TOO_LONG", path: "/subject" }
        ])
        expectError(yield* attach("idprovider", { expectedVersion: 1 }), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/subject" }
        ])
      }))

    it.effect("concurrent changes with one expectedVersion: exactly one succeeds, the others are 409", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin11@example.test")
        const target = yield* createAccount("target11@example.test")
        const servicePrincipal = yield* createServicePrincipal("admin-automation-11")
        yield* bindInstallationAdmin(servicePrincipal)
        const { key } = yield* insertServiceKey(servicePrincipal)
        const path = `/api/auth/accounts/${target.userId}/disable`
        expectError(yield* send(baseUrl, "POST", path, { "x-api-key": key }, { expectedVersion: 1 }), 401, "UNAUTHENTICATED")
        const results = yield* Effect.all(
          Array.from({ length: 4 }, () => send(baseUrl, "POST", path, admin.headers, { expectedVersion: 1 })),
          { concurrency: "unbounded" }
        )
        expect(results.map((result) => result.status).sort()).toEqual([200, 409, 409, 409])
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${target.userId}`, admin.headers)
        expect(read.body.data.version).toBe(2)
        const audited = (yield* auditRows).filter((row) => row.resource_id === target.userId && row.kind === "account.disabled")
        expect(audited).toHaveLength(1)
      }))

    // Last: scans what every test above sent back and wrote.
    it.effect("no password or session token appears in any response body, cookie aside, or in the audit table", () =>
      Effect.gen(function* () {
        const audit = yield* auditText
        expect(audit.length).toBeGreaterThan(0)
        const bodies = responses.filter((text) => !text.startsWith("svc.session_token="))
        for (const secret of secrets) {
          expect(audit).not.toContain(secret)
          for (const body of bodies) expect(body).not.toContain(secret)
        }
        expect(audit).not.toMatch(/svcs_|\$argon2/)
        for (const body of bodies) expect(body).not.toMatch(/svcs_|\$argon2/)
      }))
  })
})
