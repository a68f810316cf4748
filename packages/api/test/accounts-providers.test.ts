import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { accountsTestLayer, auditRows, expectData, expectError, seedAdministrator, send } from "./support/accountsServer.js"

const NEW_PASSWORD = "the new account's password"

describe("accounts with codehost and idprovider sign-in enabled", () => {
  it.layer(accountsTestLayer({ providers: ["codehost", "idprovider"] }), { timeout: 60_000 })((it) => {
    it.effect("POST /accounts with codehost: the identity is written with the account; a taken identity is 409", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin@example.test")
        const created = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
          email: "dev@example.test",
          password: NEW_PASSWORD,
          codehost: { subject: "4242" }
        })
        expect(created.status).toBe(201)
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${created.body.data.id}`, admin.headers)
        expect(read.body.data.methods.map((m: { providerId: string; subject: string }) => [m.providerId, m.subject]).sort())
          .toEqual([["codehost", "4242"], ["password", "dev@example.test"]])
        const audit = (yield* auditRows).find((row) => row.kind === "account.created")
        expect(audit?.details).toEqual({ principalId: created.body.data.principalId, grant: "none", codehost: true })
        expectError(
          yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
            email: "dev2@example.test",
            password: NEW_PASSWORD,
            codehost: { subject: "4242" }
          }),
          409,
          "RESOURCE_CONFLICT"
        )
      }))

    it.effect("attach codehost and idprovider identities: version-guarded, one per provider, never shared", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("admin2@example.test")
        const target = yield* createAccount("target@example.test")
        const other = yield* createAccount("other@example.test")
        const attach = (userId: string, provider: string, body: unknown) =>
          send(baseUrl, "POST", `/api/auth/accounts/${userId}/providers/${provider}`, admin.headers, body)
        expectError(yield* attach(target.userId, "codehost", { expectedVersion: 2, subject: "777" }), 409, "RESOURCE_CONFLICT")
        expectData(yield* attach(target.userId, "codehost", { expectedVersion: 1, subject: "777" }), 200, { userId: target.userId })
        expectData(yield* attach(target.userId, "idprovider", { expectedVersion: 2, subject: "user@idp|77" }), 200, {
          userId: target.userId
        })
        // A second identity of the same provider, and another account taking one: 409.
        expectError(yield* attach(target.userId, "codehost", { expectedVersion: 3, subject: "778" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* attach(other.userId, "codehost", { expectedVersion: 1, subject: "777" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* attach(other.userId, "idprovider", { expectedVersion: 1, subject: "user@idp|77" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* attach("usr_missing", "codehost", { expectedVersion: 1, subject: "9" }), 404, "NOT_FOUND")
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${target.userId}`, admin.headers)
        expect(read.body.data.version).toBe(3)
        expect(read.body.data.methods.map((m: { providerId: string }) => m.providerId).sort()).toEqual([
          "codehost",
          "idprovider",
          "password"
        ])
        const kinds = (yield* auditRows).filter((row) => row.resource_id === target.userId).map((row) => row.kind)
        expect(kinds).toEqual(["account.method-attached", "account.method-attached"])
      }))
  })
})
