/**
 * The last enabled human Installation administrator (audit F9; SPEC is silent, the decision is in
 * docs/decisions/identity.md): a disable, a revoke or a detach of the last sign-in method that
 * would leave none is 409 with nothing written, also when two administrators disable each other
 * at once.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { BuiltinRoles } from "@svc/core/iam"
import { Deferred, Effect, Fiber } from "effect"
import { bindInstallationAdmin, bindRole, createAccount, createNamespaceRow, signedInSession } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { accountsTestLayer, auditRows, browser, expectData, expectError, type Headers, seedAdministrator, send } from "./support/accountsServer.js"
import { lockWaiters } from "./support/races.js"

const LAST = [{ code: "INVALID_VALUE", path: "/userId" }]

const change = (baseUrl: string, headers: Headers, userId: string, action: string, expectedVersion: number) =>
  send(baseUrl, "POST", `/api/auth/accounts/${userId}/${action}`, headers, { expectedVersion })

const stateOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ disabled: boolean; revoked: boolean; version: number; live: number }>`
      SELECT disabled, revoked_at IS NOT NULL AS revoked, version,
             (SELECT count(*)::int FROM sessions s WHERE s.account_id = a.id AND s.revoked_at IS NULL) AS live
      FROM accounts a WHERE id = ${userId}
    `).pipe(Effect.map((rows) => rows[0]!))

const stateAudits = Effect.map(auditRows, (rows) => rows.filter((row) => /^account\.(disabled|revoked|enabled)$/.test(row.kind)))

describe("the last enabled human Installation administrator", () => {
  layer(accountsTestLayer(), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("cannot disable or revoke themselves (409 RESOURCE_CONFLICT, nothing written); with a second one they can", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdministrator("only-admin@example.test")
        // None of these is an enabled human Installation administrator.
        const disabledAdmin = yield* createAccount("disabled-admin@example.test")
        yield* bindInstallationAdmin(disabledAdmin.principalId)
        yield* sql`UPDATE accounts SET disabled = true WHERE id = ${disabledAdmin.userId}`
        const namespaceAdmin = yield* createAccount("namespace-admin@example.test")
        yield* bindRole(namespaceAdmin.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: yield* createNamespaceRow("last-admin") })
        yield* createAccount("member@example.test")

        for (const action of ["disable", "revoke"]) {
          expectError(yield* change(baseUrl, admin.headers, admin.account.userId, action, 1), 409, "RESOURCE_CONFLICT", LAST)
        }
        expect(yield* stateOf(admin.account.userId)).toEqual({ disabled: false, revoked: false, version: 1, live: 1 })
        expect(yield* stateAudits).toEqual([])
        expectData(yield* send(baseUrl, "GET", "/api/auth/session", admin.headers), 200, expect.objectContaining({ authenticated: true }))

        // A second enabled administrator: the first may now disable themselves (and is signed out).
        const second = yield* createAccount("second-admin@example.test")
        yield* bindInstallationAdmin(second.principalId)
        const secondHeaders = browser((yield* signedInSession(second.userId)).token)
        expectData(yield* change(baseUrl, admin.headers, admin.account.userId, "disable", 1), 200, { userId: admin.account.userId })
        expect(yield* stateOf(admin.account.userId)).toEqual({ disabled: true, revoked: false, version: 2, live: 0 })
        // Now the second is the last one.
        expectError(yield* change(baseUrl, secondHeaders, second.userId, "revoke", 1), 409, "RESOURCE_CONFLICT", LAST)
        expect(yield* stateOf(second.userId)).toEqual({ disabled: false, revoked: false, version: 1, live: 1 })
        // Revoking a disabled administrator removes no enabled one.
        expectData(yield* change(baseUrl, secondHeaders, disabledAdmin.userId, "revoke", 1), 200, { userId: disabledAdmin.userId })
        expect((yield* stateAudits).map((row) => [row.kind, row.resource_id])).toEqual([
          ["account.disabled", admin.account.userId],
          ["account.revoked", disabledAdmin.userId]
        ])
      }))
  })
})

const methodsOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`SELECT id FROM account_methods WHERE account_id = ${userId} ORDER BY id`).pipe(
      Effect.map((rows) => rows.map((row) => row.id))
    )

describe("the last administrator's last sign-in method", () => {
  layer(accountsTestLayer(), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("cannot be detached (409, nothing written); an administrator without a method does not count", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdministrator("method-admin@example.test")
        const [method] = yield* methodsOf(admin.account.userId)
        // A second administrator who has no sign-in method cannot sign in: not one who remains.
        const methodless = yield* createAccount("methodless-admin@example.test")
        yield* bindInstallationAdmin(methodless.principalId)
        yield* sql`DELETE FROM account_methods WHERE account_id = ${methodless.userId}`
        const detach = (version: number) =>
          send(baseUrl, "POST", `/api/auth/accounts/${admin.account.userId}/methods/${method}/detach`, admin.headers, {
            expectedVersion: version
          })
        expectError(yield* detach(1), 409, "RESOURCE_CONFLICT", LAST)
        expectError(yield* change(baseUrl, admin.headers, admin.account.userId, "disable", 1), 409, "RESOURCE_CONFLICT", LAST)
        expect(yield* methodsOf(admin.account.userId)).toEqual([method])
        expect(yield* stateOf(admin.account.userId)).toEqual({ disabled: false, revoked: false, version: 1, live: 1 })
        expect((yield* auditRows).filter((row) => row.kind.startsWith("account."))).toEqual([])

        // With a second administrator who can sign in, the method may go (the account stays enabled).
        const second = yield* createAccount("method-second@example.test")
        yield* bindInstallationAdmin(second.principalId)
        expectData(yield* detach(1), 200, { userId: admin.account.userId })
        expect(yield* methodsOf(admin.account.userId)).toEqual([])
      }))
  })
})

describe("two administrators disabling each other at once", () => {
  layer(accountsTestLayer(), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("one disable applies, the other is 409 RESOURCE_CONFLICT: one enabled administrator remains", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const a = yield* seedAdministrator("mutual-a@example.test")
        const b = yield* seedAdministrator("mutual-b@example.test")
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // A second connection holds both account rows, so both requests authenticate, then wait
        // for their target's row: each has passed every check that reads the other's state.
        const holder = yield* Effect.fork(sql.withTransaction(Effect.gen(function* () {
          yield* sql`SELECT id FROM accounts WHERE id IN (${a.account.userId}, ${b.account.userId}) FOR UPDATE`
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(release)
        })))
        yield* Deferred.await(held)
        const aDisablesB = yield* Effect.fork(change(baseUrl, a.headers, b.account.userId, "disable", 1))
        const bDisablesA = yield* Effect.fork(change(baseUrl, b.headers, a.account.userId, "disable", 1))
        while ((yield* lockWaiters) < 2) yield* Effect.sleep("20 millis")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const results = [yield* Fiber.join(aDisablesB), yield* Fiber.join(bDisablesA)]
        expect(results.map((r) => r.status).sort()).toEqual([200, 409])
        expectError(results.find((r) => r.status === 409)!, 409, "RESOURCE_CONFLICT", LAST)
        const states = [yield* stateOf(a.account.userId), yield* stateOf(b.account.userId)]
        expect(states.filter((s) => s.disabled)).toHaveLength(1)
        expect(states.filter((s) => !s.disabled)).toEqual([{ disabled: false, revoked: false, version: 1, live: 1 }])
        expect((yield* stateAudits).map((row) => row.kind)).toEqual(["account.disabled"])
      }))
  })
})
