import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Fiber } from "effect"
import { TestServer } from "../../../testing/server.js"
import { auditKinds, expectData, expectError, seedAdmin, seedNamespace, send, until } from "./support/iamServer.js"
import { accountsPath, createAccount, issue, managedApiLayer, rows, Vendor } from "./support/serviceAccountWorld.js"

/** A gate a held vendor request waits on, opened by the test once its concurrent request is done. */
const gate = () => {
  let open: () => void = () => undefined
  const release = new Promise<void>((resolve) => {
    open = resolve
  })
  return { release, open }
}

describe("service accounts: concurrent requests on one account (SPEC 4.5)", () => {
  it.layer(managedApiLayer(), { timeout: 120_000 })((it) => {
    it.effect("a DELETE while the upstream create is under way: the create is 409, no upstream account outlives the row, never a 5xx", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("sa-race-create@example.com")
        const ns = yield* seedNamespace("sa-race-create")
        const held = gate()
        const before = vendor.requests().length
        vendor.failNext("create-account", { kind: "held", release: held.release })
        const creating = yield* Effect.fork(createAccount(baseUrl, admin.headers, ns, "racy"))
        // The vendor has the create, so our row is committed `creating`.
        yield* until(Effect.sync(() => vendor.requests().slice(before).some((r) => r.method === "POST")), (seen) => seen)
        const [row] = yield* sql<{ id: string }>`SELECT id FROM service_accounts WHERE name = 'racy'`
        const deleted = yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${row!.id}`, admin.headers)
        expect(deleted.status).toBe(204)
        held.open()
        expectError(yield* Fiber.join(creating), 409, "RESOURCE_CONFLICT")
        expect(yield* rows(row!.id)).toEqual({ accounts: [], sealed: 0 })
        expect(vendor.accounts().filter((a) => a.name === `racy-${row!.id}`)).toEqual([])
        expect((yield* auditKinds(row!.id)).map((a) => a.kind)).toEqual(["service_account.deleted"])
      }))

    it.effect("an issuance adopting a lost create while a DELETE runs: the issuance is 409, the DELETE finishes, no credential is left", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("sa-race-adopt@example.com")
        const ns = yield* seedNamespace("sa-race-adopt")
        vendor.failNext("create-account", { kind: "lost" })
        vendor.failNext("list-accounts", { kind: "status", status: 503, code: "overloaded" })
        expectError(yield* createAccount(baseUrl, admin.headers, ns, "adopted"), 503, "DEPENDENCY_UNAVAILABLE")
        const [row] = yield* sql<{ id: string }>`SELECT id FROM service_accounts WHERE name = 'adopted'`
        const id = row!.id
        // The issuance's lookup by name is held; the DELETE marks the account `deleting` meanwhile.
        const held = gate()
        const before = vendor.requests().length
        vendor.failNext("list-accounts", { kind: "held", release: held.release })
        const issuing = yield* Effect.fork(issue(baseUrl, admin.headers, ns, id))
        yield* until(Effect.sync(() => vendor.requests().slice(before).some((r) => r.method === "GET")), (seen) => seen)
        vendor.failNext("delete-account", { kind: "status", status: 503, code: "unavailable" })
        expectError(yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${id}`, admin.headers), 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(id)).toEqual({ accounts: ["deleting"], sealed: 0 })
        held.open()
        expectError(yield* Fiber.join(issuing), 409, "RESOURCE_CONFLICT")
        expect(yield* rows(id)).toEqual({ accounts: ["deleting"], sealed: 0 })
        expect(vendor.credentials().filter((c) => c.name === id)).toEqual([])
        expect((yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${id}`, admin.headers)).status).toBe(204)
        expect(yield* rows(id)).toEqual({ accounts: [], sealed: 0 })
        expect(vendor.accounts().filter((a) => a.name === `adopted-${id}`)).toEqual([])
      }))

    it.effect("two DELETEs of one managed account: both 204, one service_account.deleted audit event", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-race-delete@example.com")
        const ns = yield* seedNamespace("sa-race-delete")
        const account = expectData(yield* createAccount(baseUrl, admin.headers, ns, "twice"), 201)
        const held = gate()
        const before = vendor.requests().length
        vendor.failNext("delete-account", { kind: "held", release: held.release })
        const first = yield* Effect.fork(send(baseUrl, "DELETE", `${accountsPath(ns)}/${account.id}`, admin.headers))
        yield* until(Effect.sync(() => vendor.requests().slice(before).some((r) => r.method === "DELETE")), (seen) => seen)
        expect((yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${account.id}`, admin.headers)).status).toBe(204)
        held.open()
        expect((yield* Fiber.join(first)).status).toBe(204)
        expect(yield* rows(account.id)).toEqual({ accounts: [], sealed: 0 })
        expect((yield* auditKinds(account.id)).map((a) => a.kind)).toEqual(["service_account.created", "service_account.deleted"])
      }))
  })
})
