import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { hashPassword } from "@svc/api"
import { BuiltinRoles } from "@svc/core/iam"
import { MethodId } from "@svc/core/schema"
import { Effect } from "effect"
import {
  bindInstallationAdmin,
  bindRole,
  createAccount,
  createNamespaceRow,
  createNarrowAdminRole,
  createServicePrincipal,
  insertServiceKey,
  signedInSession
} from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  accountsTestLayer,
  auditRows,
  browser,
  expectData,
  expectError,
  seedAdministrator,
  seedMember,
  send
} from "./support/accountsServer.js"

const adminAccount = (email: string) =>
  Effect.gen(function* () {
    const account = yield* createAccount(email)
    yield* bindInstallationAdmin(account.principalId)
    return account
  })

describe("the recovery designation: GET and POST /api/auth/recovery", () => {
  it.layer(accountsTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("404 before any designation; only human Installation administrators (key 401, member 403)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin@example.test")
        const member = yield* seedMember("member@example.test")
        const servicePrincipal = yield* createServicePrincipal("automation")
        yield* bindInstallationAdmin(servicePrincipal)
        const { key } = yield* insertServiceKey(servicePrincipal)
        expectError(yield* send(baseUrl, "GET", "/api/auth/recovery", admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", "/api/auth/recovery", { "x-api-key": key }), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "GET", "/api/auth/recovery", member.headers), 403, "FORBIDDEN")
        const body = { expectedCurrentUserId: admin.account.userId, expectedVersion: 1, userId: admin.account.userId }
        expectError(yield* send(baseUrl, "POST", "/api/auth/recovery", { "x-api-key": key }, body), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", "/api/auth/recovery", member.headers, body), 403, "FORBIDDEN")
      }))

    it.effect("the first designation, an unchanged repeat, then a move to another administrator", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("holder@example.test")
        const next = yield* adminAccount("next@example.test")
        const move = (body: unknown) => send(baseUrl, "POST", "/api/auth/recovery", admin.headers, body)
        const first = { expectedCurrentUserId: admin.account.userId, expectedVersion: 1, userId: admin.account.userId }
        const designation = { methodId: admin.account.methodId, principalId: admin.account.principalId, userId: admin.account.userId }
        expectData(yield* move(first), 200, { changed: true, ...designation })
        expectData(yield* send(baseUrl, "GET", "/api/auth/recovery", admin.headers), 200, designation)
        expectData(yield* move(first), 200, { changed: false, ...designation })
        // Stale holder, stale version: 409.
        expectError(
          yield* move({ expectedCurrentUserId: next.userId, expectedVersion: 1, userId: next.userId }),
          409,
          "RESOURCE_CONFLICT"
        )
        expectError(
          yield* move({ expectedCurrentUserId: admin.account.userId, expectedVersion: 2, userId: next.userId }),
          409,
          "RESOURCE_CONFLICT"
        )
        expectError(
          yield* move({ expectedCurrentUserId: admin.account.userId, expectedVersion: 1, userId: "usr_missing" }),
          404,
          "NOT_FOUND"
        )
        const moved = { methodId: next.methodId, principalId: next.principalId, userId: next.userId }
        expectData(
          yield* move({ expectedCurrentUserId: admin.account.userId, expectedVersion: 1, userId: next.userId }),
          200,
          { changed: true, ...moved }
        )
        expectData(yield* send(baseUrl, "GET", "/api/auth/recovery", admin.headers), 200, moved)
        const audit = (yield* auditRows).filter((row) => row.kind === "recovery.designation-moved")
        expect(audit.map((row) => row.resource_id)).toEqual([admin.account.userId, next.userId])
        // The designated method cannot be detached.
        expectError(
          yield* send(baseUrl, "POST", `/api/auth/accounts/${next.userId}/methods/${next.methodId}/detach`, admin.headers, {
            expectedVersion: 1
          }),
          409,
          "RESOURCE_CONFLICT"
        )
      }))

    it.effect("the target must be an enrolled, enabled administrator with exactly one password (409)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const current = (yield* sql<{ account_id: string }>`SELECT account_id FROM recovery_designation`)[0]!.account_id
        const admin = yield* seedAdministrator("caller3@example.test")
        const notAdmin = yield* createAccount("plain@example.test")
        const disabled = yield* adminAccount("disabled3@example.test")
        yield* sql`UPDATE accounts SET disabled = true WHERE id = ${disabled.userId}`
        const unenrolled = yield* adminAccount("unenrolled3@example.test")
        yield* sql`UPDATE accounts SET enrolled_at = NULL WHERE id = ${unenrolled.userId}`
        const twoPasswords = yield* adminAccount("two3@example.test")
        yield* sql`
          INSERT INTO account_methods (id, account_id, provider_id, subject, password_hash)
          VALUES (${MethodId.make()}, ${twoPasswords.userId}, 'password', 'second-subject', ${yield* hashPassword("another password!")})
        `
        for (const target of [notAdmin, disabled, unenrolled, twoPasswords]) {
          expectError(
            yield* send(baseUrl, "POST", "/api/auth/recovery", admin.headers, {
              expectedCurrentUserId: current,
              expectedVersion: 1,
              userId: target.userId
            }),
            409,
            "RESOURCE_CONFLICT"
          )
        }
      }))

    it.effect("the caller must hold every grant of the current holder's Principal, else 403 (audited)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const current = (yield* sql<{ account_id: string; principal_id: string }>`
          SELECT r.account_id, a.principal_id FROM recovery_designation r JOIN accounts a ON a.id = r.account_id
        `)[0]!
        const namespaceId = yield* createNamespaceRow("holder-team")
        yield* bindRole(current.principal_id, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: namespaceId })
        const caller = yield* seedAdministrator("caller4@example.test")
        // The caller administers the Installation but is restricted inside the holder's Namespace.
        yield* sql`
          INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
          VALUES ('rst_4', ${caller.account.principalId}, 'secret:read', 'namespace', ${namespaceId})
        `
        const body = { expectedCurrentUserId: current.account_id, expectedVersion: 1, userId: caller.account.userId }
        expectError(yield* send(baseUrl, "POST", "/api/auth/recovery", caller.headers, body), 403, "FORBIDDEN")
        const denied = (yield* auditRows).filter((row) => row.kind === "authorization.denied" && row.actor_principal_id === caller.account.principalId)
        expect(denied).toHaveLength(1)
        // Without it, its Installation binding holds every permission of the holder's namespace-admin binding.
        yield* sql`DELETE FROM restrictions WHERE id = 'rst_4'`
        expectData(yield* send(baseUrl, "POST", "/api/auth/recovery", caller.headers, body), 200, {
          changed: true,
          methodId: caller.account.methodId,
          principalId: caller.account.principalId,
          userId: caller.account.userId
        })
      }))

    it.effect("the caller must also hold every grant of the target's Principal (expectedVersion rule), else 403 (audited)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        // Holder and caller administer the Installation with nothing else; the target has full installation-admin.
        const narrowRole = yield* createNarrowAdminRole
        const holder = yield* createAccount("narrow-holder@example.test")
        yield* bindRole(holder.principalId, narrowRole, { kind: "installation" })
        yield* sql`UPDATE recovery_designation SET account_id = ${holder.userId}, method_id = ${holder.methodId}`
        const narrow = yield* createAccount("narrow-caller@example.test")
        yield* bindRole(narrow.principalId, narrowRole, { kind: "installation" })
        const caller = { account: narrow, headers: browser((yield* signedInSession(narrow.userId)).token) }
        const target = yield* adminAccount("target5@example.test")
        const body = { expectedCurrentUserId: holder.userId, expectedVersion: 1, userId: target.userId }
        expectError(yield* send(baseUrl, "POST", "/api/auth/recovery", caller.headers, body), 403, "FORBIDDEN")
        const denied = (yield* auditRows).filter((row) => row.kind === "authorization.denied" && row.actor_principal_id === narrow.principalId)
        expect(denied).toHaveLength(1)
        expect(yield* sql`SELECT account_id FROM recovery_designation`).toEqual([{ account_id: holder.userId }])
        // The same caller may move it to an account whose grants it holds.
        const peer = yield* createAccount("narrow-peer@example.test")
        yield* bindRole(peer.principalId, narrowRole, { kind: "installation" })
        expectData(
          yield* send(baseUrl, "POST", "/api/auth/recovery", caller.headers, { ...body, userId: peer.userId }),
          200,
          { changed: true, methodId: peer.methodId, principalId: peer.principalId, userId: peer.userId }
        )
      }))
  })
})
