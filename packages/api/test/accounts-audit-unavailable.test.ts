/**
 * SPEC 4.1 and 5.9: account state and its audit commit together, and an audit dependency that
 * cannot record fails closed with 503 DEPENDENCY_UNAVAILABLE: nothing is written, nothing changes.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { bindRole, createAccount, createNarrowAdminRole, signedInSession } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  accountCount,
  accountsTestLayer,
  browser,
  expectData,
  expectError,
  seedAdministrator,
  send
} from "./support/accountsServer.js"
import { failAudits, healAudits } from "./support/serviceKeys.js"

const PASSWORD = "a long enough password"

describe("account management when the audit cannot be recorded (SPEC 5.9)", () => {
  it.layer(accountsTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("POST /accounts: 503 DEPENDENCY_UNAVAILABLE and no account", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("audit-admin@example.test")
        const before = yield* accountCount
        yield* failAudits("account.created")
        const result = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
          email: "unaudited@example.test",
          password: PASSWORD
        }).pipe(Effect.ensuring(healAudits))
        expectError(result, 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* accountCount).toBe(before)
      }))

    it.effect("disable: 503 DEPENDENCY_UNAVAILABLE; the account, its version and its sessions are unchanged", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdministrator("audit-admin2@example.test")
        const target = yield* createAccount("audit-target@example.test")
        const session = yield* signedInSession(target.userId)
        yield* failAudits("account.disabled")
        const result = yield* send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/disable`, admin.headers, {
          expectedVersion: 1
        }).pipe(Effect.ensuring(healAudits))
        expectError(result, 503, "DEPENDENCY_UNAVAILABLE")
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${target.userId}`, admin.headers)
        expect(read.body.data).toMatchObject({ disabled: false, version: 1 })
        const live = yield* sql`SELECT 1 FROM sessions WHERE id = ${session.id} AND revoked_at IS NULL`
        expect(live).toHaveLength(1)
        // With the audit back, the same change goes through.
        expectData(
          yield* send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/disable`, admin.headers, { expectedVersion: 1 }),
          200,
          { userId: target.userId }
        )
      }))

    it.effect("a grant-coverage denial that cannot be audited: 503, not 500, and nothing changes", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const narrowRole = yield* createNarrowAdminRole
        const narrow = yield* createAccount("audit-narrow@example.test")
        yield* bindRole(narrow.principalId, narrowRole, { kind: "installation" })
        const headers = browser((yield* signedInSession(narrow.userId)).token)
        const target = yield* seedAdministrator("audit-full-admin@example.test")
        const disable = send(baseUrl, "POST", `/api/auth/accounts/${target.account.userId}/disable`, headers, { expectedVersion: 1 })
        expectError(yield* disable, 403, "FORBIDDEN")
        yield* failAudits("authorization.denied")
        expectError(yield* disable.pipe(Effect.ensuring(healAudits)), 503, "DEPENDENCY_UNAVAILABLE")
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${target.account.userId}`, target.headers)
        expect(read.body.data).toMatchObject({ disabled: false, version: 1 })
      }))
  })
})
