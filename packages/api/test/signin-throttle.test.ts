import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { throttleDelay } from "../src/accounts/throttle.js"
import { bindInstallationAdmin, createAccount } from "../../../testing/identity.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectData, expectError, setCookieOf, signIn } from "./support/accountsServer.js"

const PASSWORD = "a long enough password"
const WRONG = "definitely the wrong one"

const fail10 = (baseUrl: string, email: string) =>
  Effect.forEach(Array.from({ length: 10 }), () =>
    Effect.map(signIn(baseUrl, email, WRONG), (result) => expectError(result, 401, "UNAUTHENTICATED")))

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const started = Date.now()
    const value = yield* effect
    return { value, ms: Date.now() - started }
  })

const expectThrottled = (result: Awaited<ReturnType<typeof import("../../../testing/server.js").call>>) => {
  expectError(result, 429, "UNAUTHENTICATED")
  const retryAfter = Number(result.headers.get("retry-after"))
  expect(Number.isInteger(retryAfter)).toBe(true)
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(setCookieOf(result)).toBeNull()
}

// Real time: the throttle's 1-8 s delay is part of what is tested.
describe("sign-in throttling (SPEC 5.4)", () => {
  // The log capture keeps the access log of the many attempts out of the test output.
  layer(accountsTestLayer().pipe(Layer.provideMerge(LogCapture.layer)), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("after 10 failures per email: delayed 429 with Retry-After, whether or not the email exists", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("victim@example.test", { password: PASSWORD })
        for (const email of ["victim@example.test", "ghost@example.test"]) {
          yield* fail10(baseUrl, email)
          const first = yield* timed(signIn(baseUrl, email, WRONG))
          expectThrottled(first.value)
          expect(first.ms).toBeGreaterThanOrEqual(1000)
          expect(first.ms).toBeLessThan(8000 + 2000)
        }
        // The delay grows with further attempts (1 s, then 2 s, ...).
        const second = yield* timed(signIn(baseUrl, "ghost@example.test", WRONG))
        expectThrottled(second.value)
        expect(second.ms).toBeGreaterThanOrEqual(2000)
        // A correct password of an account that is not an administrator is throttled too.
        const correct = yield* timed(signIn(baseUrl, "VICTIM@example.test", PASSWORD))
        expectThrottled(correct.value)
        // Another email is not affected.
        yield* createAccount("bystander@example.test", { password: PASSWORD })
        expectData(yield* signIn(baseUrl, "bystander@example.test", PASSWORD), 200, { authenticated: true })
      }))

    it.effect("an Installation administrator's correct password still signs in", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* createAccount("root@example.test", { password: PASSWORD })
        yield* bindInstallationAdmin(admin.principalId)
        yield* fail10(baseUrl, admin.email)
        expectThrottled(yield* signIn(baseUrl, admin.email, WRONG))
        const result = yield* timed(signIn(baseUrl, admin.email, PASSWORD))
        expectData(result.value, 200, { authenticated: true })
        expect(setCookieOf(result.value)).toMatch(/^svc\.session_token=svcs_/)
        expect(result.ms).toBeLessThan(1000)
      }))

    it.effect("failures are kept in PostgreSQL (shared by replicas) as email digests, and expire with the window", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        yield* createAccount("window@example.test", { password: PASSWORD })
        yield* fail10(baseUrl, "window@example.test")
        const rows = yield* sql<{ digest: string }>`
          SELECT encode(email_digest, 'hex') AS digest FROM sign_in_failures
          WHERE email_digest = sha256(convert_to('window@example.test', 'UTF8'))
        `
        expect(rows).toHaveLength(10)
        const dump = yield* sql<{ row: string }>`SELECT row_to_json(f)::text AS row FROM sign_in_failures f`
        expect(dump.map((r) => r.row).join("\n")).not.toContain("window@example.test")
        // What another replica sees is this table: moving the failures out of the window lifts it.
        yield* sql`UPDATE sign_in_failures SET at = at - interval '61 seconds'`
        expectData(yield* signIn(baseUrl, "window@example.test", PASSWORD), 200, { authenticated: true })
      }))
  })
})

describe("the throttle delay", () => {
  it("is 1 s for the first attempt over the limit, one more per further failure, at most 8 s", () => {
    const delay = (failures: number) =>
      Duration.toSeconds(throttleDelay({ throttled: failures >= 10, failures, retryAfterSeconds: 1 }))
    expect([10, 11, 12, 17, 18, 100].map(delay)).toEqual([1, 2, 3, 8, 8, 8])
  })
})
