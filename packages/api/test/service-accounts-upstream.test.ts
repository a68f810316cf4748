/**
 * Service accounts against the loopback vendor Admin API's answers that service-accounts.test.ts
 * does not drive through the API (SPEC 4.5, 7.4; UPSTREAMS.md): issuance refused (401, 404, 429),
 * failed (5xx), slower than the deadline or lost, and deletion steps that are slow, lost or
 * refused (a lost credential delete, an account delete failed with a 5xx or slower than the
 * deadline), each repeated until it finishes. Every failure is 503 `DEPENDENCY_UNAVAILABLE`
 * with a fixed message; what the vendor sent never reaches the caller.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { keyWithPermissions } from "./support/credentialGatewayWorld.js"
import { accountsPath, createAccount, issue, managedApiLayer, rows, Vendor } from "./support/serviceAccountWorld.js"

const setUp = (name: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const vendor = yield* Vendor
    const admin = yield* seedAdmin(`${name}@example.com`)
    const ns = yield* seedNamespace(name)
    const account = expectData(yield* createAccount(baseUrl, admin.headers, ns, name), 201) as { id: string }
    const upstream = vendor.accounts().find((a) => a.name === `${name}-${account.id}`)!
    const path = `${accountsPath(ns)}/${account.id}`
    return {
      vendor, ns, account, upstream, path,
      issue: issue(baseUrl, admin.headers, ns, account.id),
      read: Effect.map(send(baseUrl, "GET", path, admin.headers), (r) => expectData(r, 200)),
      remove: send(baseUrl, "DELETE", path, admin.headers)
    }
  })

/**
 * Waits (polling on a real timer) until the vendor's state satisfies `done`: after a slow answer
 * the vendor acts once its delay has passed, whenever that is on a busy host.
 */
const vendorState = <A>(read: () => A, done: (a: A) => boolean) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 60_000
    while (!done(read()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    return read()
  }).pipe(Effect.tap((value) => expect(done(value)).toBe(true)))

describe("service accounts: every vendor answer", () => {
  it.layer(managedApiLayer(), { timeout: 120_000 })((it) => {
    it.effect("issuance refused (401, 404, 429), failed (5xx) or slower than the deadline answers 503 and records nothing; the next one works", () =>
      Effect.gen(function* () {
        const world = yield* setUp("sa-issue-fail")
        const { vendor, account, upstream } = world
        const faults = [
          { kind: "status", status: 401, code: "invalid_api_key" },
          { kind: "status", status: 404, code: "service_account_not_found" },
          { kind: "status", status: 429, code: "rate_limited" },
          { kind: "status", status: 500, code: "internal_error" },
          { kind: "status", status: 503, code: "overloaded" },
          { kind: "slow", delayMs: 2500 }
        ] as const
        for (const fault of faults) {
          vendor.failNext("issue-credential", fault)
          const refused = yield* world.issue
          expectError(refused, 503, "DEPENDENCY_UNAVAILABLE")
          if (fault.kind === "status") expect(refused.text).not.toContain(fault.code)
          expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 0 })
          expect(yield* world.read).toMatchObject({ state: "ready", credential: null })
        }
        // The slow one was issued upstream after our deadline: a credential nobody holds.
        yield* vendorState(() => vendor.credentials().filter((c) => c.service_account_id === upstream.id), (held) => held.length === 1)
        expect(yield* world.issue).toMatchObject({ status: 201 })
        expect(yield* world.read).toMatchObject({ state: "ready", credential: { kind: "access_token", ready: true } })
        expect(vendor.credentials().filter((c) => c.service_account_id === upstream.id)).toHaveLength(2)
        // Deleting the account takes the unheld credential with it upstream.
        expect((yield* world.remove).status).toBe(204)
        expect(vendor.credentials().filter((c) => c.service_account_id === upstream.id)).toEqual([])
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(false)
      }))

    it.effect("a lost issuance answer is 503 and records nothing; after a vendor restart issuance works once, then 409", () =>
      Effect.gen(function* () {
        const world = yield* setUp("sa-issue-lost")
        const { vendor, account, upstream } = world
        vendor.failNext("issue-credential", { kind: "lost" })
        expectError(yield* world.issue, 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 0 })
        expect(vendor.credentials().filter((c) => c.service_account_id === upstream.id)).toHaveLength(1)
        // Unreachable: still 503; then back.
        yield* Effect.promise(() => vendor.stop())
        expectError(yield* world.issue, 503, "DEPENDENCY_UNAVAILABLE")
        yield* Effect.promise(() => vendor.restart())
        expect(yield* world.issue).toMatchObject({ status: 201 })
        expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 1 })
        expectError(yield* world.issue, 409, "RESOURCE_CONFLICT")
        expect((yield* world.remove).status).toBe(204)
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(false)
      }))

    it.effect("deletion steps that are slow, lost or refused answer 503 and leave the account deleting; repeats after a restart finish it", () =>
      Effect.gen(function* () {
        const world = yield* setUp("sa-delete-fail")
        const { vendor, account, upstream } = world
        expect(yield* world.issue).toMatchObject({ status: 201 })
        const credentialId = vendor.credentials().find((c) => c.service_account_id === upstream.id)!.id

        // The credential delete is slow: removed upstream after our deadline.
        vendor.failNext("delete-credential", { kind: "slow", delayMs: 2500 })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(account.id)).toEqual({ accounts: ["deleting"], sealed: 1 })
        yield* vendorState(() => vendor.credentials().some((c) => c.id === credentialId), (present) => !present)

        // The repeat: the credential is already gone (credential_not_found counts as deleted);
        // the account delete is refused (429), then lost (carried out, answer never sent).
        vendor.failNext("delete-account", { kind: "status", status: 429, code: "rate_limited" })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(account.id)).toEqual({ accounts: ["deleting"], sealed: 0 })
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(true)
        vendor.failNext("delete-account", { kind: "lost" })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(false)
        expect(yield* world.read).toMatchObject({ state: "deleting", credential: null })

        // The vendor restarts; the next repeat meets service_account_not_found and finishes.
        yield* Effect.promise(() => vendor.restart())
        expect((yield* world.remove).status).toBe(204)
        expect(yield* rows(account.id)).toEqual({ accounts: [], sealed: 0 })
        expect(vendor.requests().filter((r) => r.method === "DELETE" && r.path.endsWith(`/service-accounts/${upstream.id}`))).toHaveLength(3)
      }))

    it.effect("a lost credential delete, then an account delete that fails (5xx) or is slow: 503 each, deleting kept; the repeat finishes", () =>
      Effect.gen(function* () {
        const world = yield* setUp("sa-delete-more")
        const { vendor, account, upstream } = world
        expect(yield* world.issue).toMatchObject({ status: 201 })
        const credentialId = vendor.credentials().find((c) => c.service_account_id === upstream.id)!.id

        // The credential delete is carried out but its answer never arrives: the sealed record stays
        // until a repeat sees credential_not_found.
        vendor.failNext("delete-credential", { kind: "lost" })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(vendor.credentials().some((c) => c.id === credentialId)).toBe(false)
        expect(yield* rows(account.id)).toEqual({ accounts: ["deleting"], sealed: 1 })

        // The account delete fails upstream: nothing removed there, the sealed record is gone.
        vendor.failNext("delete-account", { kind: "status", status: 500, code: "internal_error" })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(account.id)).toEqual({ accounts: ["deleting"], sealed: 0 })
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(true)

        // Slower than the deadline: 503 now, carried out upstream later.
        vendor.failNext("delete-account", { kind: "slow", delayMs: 2500 })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* world.read).toMatchObject({ state: "deleting", credential: null })
        yield* vendorState(() => vendor.accounts().some((a) => a.id === upstream.id), (present) => !present)

        // The repeat meets service_account_not_found and finishes.
        expect((yield* world.remove).status).toBe(204)
        expect(yield* rows(account.id)).toEqual({ accounts: [], sealed: 0 })
      }))

    it.effect("deletion steps the vendor refuses for the admin key (401, 403): 503, deleting kept, nothing removed upstream", () =>
      Effect.gen(function* () {
        const world = yield* setUp("sa-delete-key")
        const { vendor, account, upstream } = world
        expect(yield* world.issue).toMatchObject({ status: 201 })
        const credentialId = vendor.credentials().find((c) => c.service_account_id === upstream.id)!.id

        vendor.failNext("delete-credential", { kind: "status", status: 401, code: "unauthorized" })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(vendor.credentials().some((c) => c.id === credentialId)).toBe(true)
        expect(yield* rows(account.id)).toEqual({ accounts: ["deleting"], sealed: 1 })

        vendor.failNext("delete-account", { kind: "status", status: 403, code: "forbidden" })
        expectError(yield* world.remove, 503, "DEPENDENCY_UNAVAILABLE")
        expect(vendor.credentials().some((c) => c.id === credentialId)).toBe(false)
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(true)
        expect(yield* rows(account.id)).toEqual({ accounts: ["deleting"], sealed: 0 })

        expect((yield* world.remove).status).toBe(204)
        expect(yield* rows(account.id)).toEqual({ accounts: [], sealed: 0 })
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(false)
      }))

    it.effect("with the vendor selected, issuance needs update and deletion needs delete on the account; refusals reach no upstream", () =>
      Effect.gen(function* () {
        const world = yield* setUp("sa-upstream-authz")
        const { vendor, upstream, ns } = world
        const { baseUrl } = yield* TestServer
        const stranger = yield* keyWithPermissions(ns, "sa-stranger", [])
        const reader = yield* keyWithPermissions(ns, "sa-reader", ["namespace:read", "service_account:read"])
        const updater = yield* keyWithPermissions(ns, "sa-updater", ["namespace:read", "service_account:read", "service_account:update"])
        const deleter = yield* keyWithPermissions(ns, "sa-deleter", ["namespace:read", "service_account:read", "service_account:delete"])
        const before = vendor.requests().length
        expectError(yield* issue(baseUrl, stranger.headers, ns, world.account.id), 404, "NOT_FOUND")
        expectError(yield* issue(baseUrl, reader.headers, ns, world.account.id), 403, "FORBIDDEN")
        expectError(yield* issue(baseUrl, deleter.headers, ns, world.account.id), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "DELETE", world.path, stranger.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", world.path, updater.headers), 403, "FORBIDDEN")
        expect(vendor.requests().length).toBe(before)
        expect(yield* issue(baseUrl, updater.headers, ns, world.account.id)).toMatchObject({ status: 201 })
        expect((yield* send(baseUrl, "DELETE", world.path, deleter.headers)).status).toBe(204)
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(false)
      }))
  })
})
