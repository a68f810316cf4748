/**
 * The ServiceAccount Driver's wire behaviour against real loopback servers: the loopback vendor
 * Admin API (UPSTREAMS.md) for the protocol, and small raw servers for what a well-behaved
 * vendor never sends (redirects, oversized or malformed answers). Plus `SVC_DEV_UPSTREAMS`.
 */
import { describe, expect, it } from "@effect/vitest"
import { DevUpstreamsConfig, upstreamOrigin } from "@svc/core/config"
import { LIST_PAGE_SIZE, makeModelVendorDriver, MAX_ANSWER_BYTES, MAX_LIST_PAGES, MODEL_VENDOR_ADMIN_ORIGIN } from "@svc/core/drivers/serviceAccount"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { startModelVendorAdmin } from "../../../testing/modelVendorAdmin.js"

const WORKSPACE = "6c1f7b52-1d6e-4c39-9a0b-6f5d2a4e8b10"
const KEY = "admin-key-for-driver-tests"

const keyFile = (content = KEY) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-driver-key-")), "key")
  fs.writeFileSync(file, content)
  return file
}

const driverAt = (origin: string, apiKeyPath = keyFile()) =>
  makeModelVendorDriver({
    driverId: "modelvendor", backendId: "models", workspaceId: WORKSPACE, credentialTtlSeconds: 60,
    apiKeyPath, origin, timeoutMs: 1000
  })

/** A raw server that answers every request with `respond`. */
const rawServer = (respond: (res: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<http.Server>((resolve) => {
        const server = http.createServer((_req, res) => respond(res))
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
    ),
    (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

const loopbackVendor = Effect.acquireRelease(
  Effect.promise(() => startModelVendorAdmin({ adminKey: KEY, workspaceId: WORKSPACE })),
  (v) => Effect.promise(() => v.close())
)

const reasonOf = <A>(effect: Effect.Effect<A, { readonly reason: string }>) => Effect.map(Effect.flip(effect), (e) => e.reason)

describe("the model vendor ServiceAccount Driver", () => {
  it.scoped("speaks the Admin API: create, adopt by name, issue, and already-gone deletes succeed", () =>
    Effect.gen(function* () {
      const vendor = yield* loopbackVendor
      const driver = driverAt(vendor.origin)
      const { upstreamId } = yield* driver.createAccount("bot-sa_1")
      expect(yield* driver.findAccount("bot-sa_1")).toEqual(Option.some(upstreamId))
      expect(yield* driver.findAccount("nobody")).toEqual(Option.none())
      const credential = yield* driver.issueCredential(upstreamId, "sa_1")
      expect(Redacted.value(credential.accessToken)).toBe(vendor.credentials()[0]!.access_token)
      expect(credential.workspaceId).toBe(WORKSPACE)
      expect(vendor.credentials()[0]).toMatchObject({ ttl: 60, scopes: ["inference"] })
      expect(vendor.requests()[0]).toMatchObject({ method: "POST", path: `/v1/manage/workspaces/${WORKSPACE}/service-accounts`, body: { name: "bot-sa_1" } })
      yield* driver.deleteCredential(upstreamId, credential.id)
      yield* driver.deleteCredential(upstreamId, credential.id)
      yield* driver.deleteAccount(upstreamId)
      yield* driver.deleteAccount(upstreamId)
      expect(vendor.accounts()).toEqual([])
      // A 404 that is not the vendor's "already gone" is an unexpected answer, not success.
      expect(yield* reasonOf(driverAt(vendor.origin.replace(/\/?$/, "/v9")).deleteAccount(upstreamId))).toBe("invalid_response")
      // 401, 429, 5xx and an unreadable key file.
      vendor.failNext("create-account", { kind: "status", status: 429, code: "rate_limited" })
      expect(yield* reasonOf(driver.createAccount("x"))).toBe("rate_limited")
      expect(yield* reasonOf(driverAt(vendor.origin, keyFile("wrong-key")).createAccount("x"))).toBe("credentials_rejected")
      expect(yield* reasonOf(driverAt(vendor.origin, "/nonexistent/key").createAccount("x"))).toBe("admin_key_unreadable")
      expect(yield* reasonOf(driverAt(vendor.origin, keyFile("  \n")).createAccount("x"))).toBe("admin_key_unreadable")
      vendor.failNext("issue-credential", { kind: "status", status: 503, code: "overloaded" })
      const again = yield* driver.createAccount("y")
      expect(yield* reasonOf(driver.issueCredential(again.upstreamId, "sa_2"))).toBe("unavailable")
      vendor.failNext("issue-credential", { kind: "slow", delayMs: 1500 })
      expect(yield* reasonOf(driver.issueCredential(again.upstreamId, "sa_2"))).toBe("timeout")
    }))

  it.scoped("looks a name up by reading the account list page by page; a lost create is adopted from a later page", () =>
    Effect.gen(function* () {
      const vendor = yield* loopbackVendor
      const driver = driverAt(vendor.origin)
      yield* Effect.forEach(Array.from({ length: LIST_PAGE_SIZE + 30 }, (_, i) => `filler-${i}`), (name) => driver.createAccount(name), { concurrency: 8 })
      // The create is carried out upstream and its answer lost: the Driver finds it on page two.
      vendor.failNext("create-account", { kind: "lost" })
      const before = vendor.requests().length
      const { upstreamId } = yield* driver.createAccount("bot-sa_2")
      expect(vendor.accounts().filter((a) => a.name === "bot-sa_2").map((a) => a.id)).toEqual([upstreamId])
      const base = `/v1/manage/workspaces/${WORKSPACE}/service-accounts`
      const lookups = vendor.requests().slice(before + 1)
      expect(lookups.map((r) => r.method)).toEqual(["GET", "GET"])
      expect(lookups[0]!.path).toBe(`${base}?limit=${LIST_PAGE_SIZE}`)
      expect(lookups[1]!.path).toMatch(new RegExp(`^${base}\\?limit=${LIST_PAGE_SIZE}&page=[A-Za-z0-9_-]+$`))
      expect(yield* driver.findAccount("filler-3")).toEqual(Option.some(vendor.accounts().find((a) => a.name === "filler-3")!.id))
      expect(yield* driver.findAccount("nobody")).toEqual(Option.none())
      // A lookup whose list answer is lost is a failed lookup, not "absent".
      vendor.failNext("list-accounts", { kind: "lost" })
      expect(yield* reasonOf(driver.findAccount("nobody"))).toBe("unavailable")
      // A cursor that never moves on is refused rather than followed for ever.
      const stuck = yield* rawServer((res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ data: [{ id: "vsa_1", name: "other" }], next_page: "same" }))
      })
      expect(yield* reasonOf(driverAt(stuck).findAccount("bot"))).toBe("invalid_response")
      let served = 0
      const endless = yield* rawServer((res) => {
        served += 1
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ data: [], next_page: `p${served}` }))
      })
      expect(yield* reasonOf(driverAt(endless).findAccount("bot"))).toBe("invalid_response")
      expect(served).toBe(MAX_LIST_PAGES)
    }))

  it.scoped("refuses redirects, oversized answers and malformed bodies", () =>
    Effect.gen(function* () {
      const redirect = yield* rawServer((res) => {
        res.writeHead(307, { location: "https://elsewhere.example/" })
        res.end()
      })
      expect(yield* reasonOf(driverAt(redirect).createAccount("x"))).toBe("invalid_response")
      const huge = yield* rawServer((res) => {
        res.writeHead(201, { "content-type": "application/json" })
        res.end(`{"id":"${"a".repeat(MAX_ANSWER_BYTES)}","workspace_id":"w","enabled":true}`)
      })
      expect(yield* reasonOf(driverAt(huge).deleteAccount("x"))).toBe("invalid_response")
      const garbage = yield* rawServer((res) => {
        res.writeHead(201, { "content-type": "application/json" })
        res.end(`{"id": 7}`)
      })
      expect(yield* reasonOf(driverAt(garbage).issueCredential("x", "sa"))).toBe("invalid_response")
      const notJson = yield* rawServer((res) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end("<html>")
      })
      expect(yield* reasonOf(driverAt(notJson).deleteAccount("x"))).toBe("invalid_response")
    }))
})

describe("SVC_DEV_UPSTREAMS", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(DevUpstreamsConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))))

  it("maps a fixed origin to a loopback origin in development; unset means none", () => {
    const mapped = Either.getOrThrow(read({ SVC_DEV_UPSTREAMS: JSON.stringify({ [MODEL_VENDOR_ADMIN_ORIGIN]: "http://127.0.0.1:9001" }) }))
    expect(upstreamOrigin(mapped, MODEL_VENDOR_ADMIN_ORIGIN)).toBe("http://127.0.0.1:9001")
    expect(upstreamOrigin(Either.getOrThrow(read({})), MODEL_VENDOR_ADMIN_ORIGIN)).toBe(MODEL_VENDOR_ADMIN_ORIGIN)
  })

  it("is refused in production and when not origin-to-loopback JSON", () => {
    const production = read({ SVC_ENV: "production", SVC_DEV_UPSTREAMS: JSON.stringify({ [MODEL_VENDOR_ADMIN_ORIGIN]: "http://127.0.0.1:9001" }) })
    expect(Either.isLeft(production) && String(production.left)).toContain("only allowed when SVC_ENV=development")
    for (const bad of ["[]", "{", JSON.stringify({ "http://plain.example": "http://127.0.0.1:1" }), JSON.stringify({ [MODEL_VENDOR_ADMIN_ORIGIN]: "http://10.0.0.1:1" }), JSON.stringify({ [`${MODEL_VENDOR_ADMIN_ORIGIN}/v1`]: "http://127.0.0.1:1" })]) {
      expect(Either.isLeft(read({ SVC_DEV_UPSTREAMS: bad })), bad).toBe(true)
    }
  })
})
