/**
 * Concurrent account writes (SPEC 4.1, 5.7): an email names one account, and every mutation that
 * carries `expectedVersion` is a compare-and-set, so of racing writers with one version exactly
 * one succeeds, whatever the operations are, and state and audit commit together.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { accountsTestLayer, auditRows, expectError, seedAdministrator, send } from "./support/accountsServer.js"
import { burst, noServerErrors, race, ROUNDS } from "./support/races.js"

const PASSWORD = "a racing account password"

describe("concurrent account writes", () => {
  it.layer(accountsTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("N creates with one email (differently cased): one 201, the rest 409, one account, one audit", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdministrator("race-accounts-admin@example.test")
        for (let round = 0; round < ROUNDS; round++) {
          const email = `racer${round}@example.test`
          const results = yield* burst(5, () =>
            send(baseUrl, "POST", "/api/auth/accounts", admin.headers, { email: Math.random() < 0.5 ? email : email.toUpperCase(), password: PASSWORD }))
          noServerErrors(results)
          expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409])
          for (const loser of results.filter((r) => r.status === 409)) expectError(loser, 409, "RESOURCE_CONFLICT")
          const winner = results.find((r) => r.status === 201)!.body.data
          expect(yield* sql`SELECT id FROM accounts WHERE lower(email) = ${email}`).toEqual([{ id: winner.id }])
          expect((yield* auditRows).filter((row) => row.kind === "account.created" && row.outcome === "success" && row.resource_id === winner.id)).toHaveLength(1)
        }
      }))

    it.effect("disable, revoke and enable racing with one expectedVersion: one applies, the others are 409, one audit, version + 1", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("race-version-admin@example.test")
        for (let round = 0; round < ROUNDS; round++) {
          const target = yield* createAccount(`race-version-${round}@example.test`)
          const post = (action: string) => send(baseUrl, "POST", `/api/auth/accounts/${target.userId}/${action}`, admin.headers, { expectedVersion: 1 })
          const results = yield* race([post("disable"), post("revoke"), post("disable"), post("revoke")])
          noServerErrors(results)
          expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409])
          for (const loser of results.filter((r) => r.status === 409)) expectError(loser, 409, "RESOURCE_CONFLICT")
          const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${target.userId}`, admin.headers)
          expect(read.body.data.version).toBe(2)
          const audited = (yield* auditRows).filter((row) => row.resource_id === target.userId && row.outcome === "success")
          expect(audited.map((row) => row.details["version"])).toEqual([2])
        }
      }))
  })
})
