import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { RESERVE } from "../src/accounts/throttle.js"
import { bindInstallationAdmin, createAccount } from "../../../testing/identity.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectData, expectError, type Result, setCookieOf, signIn } from "./support/accountsServer.js"

const PASSWORD = "a long enough password"
const BURST = 200
const RIGHT_AT = 190

/** 200 simultaneous sign-ins for one email, all wrong but the one at position 190. */
const burst = (baseUrl: string, email: string, headers: Record<string, string> = {}) =>
  Effect.all(
    Array.from({ length: BURST }, (_, i) => signIn(baseUrl, email, i === RIGHT_AT ? PASSWORD : `wrong password ${i}`, headers)),
    { concurrency: "unbounded" }
  )

const evaluatedRows = (column: "email_digest" | "client_address", value: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const filter = column === "email_digest"
      ? sql`email_digest = sha256(convert_to(${value}, 'UTF8'))`
      : sql`client_address = ${value}`
    const rows = yield* sql<{ evaluated: number; refused: number }>`
      SELECT count(*) FILTER (WHERE evaluated)::int AS evaluated, count(*) FILTER (WHERE NOT evaluated)::int AS refused
      FROM sign_in_failures WHERE ${filter}
    `
    return rows[0]!
  })

/** Every answer is a 401 (an ordinary evaluation) or the one 429 a throttled attempt gets. */
const expectOnly401Or429 = (results: ReadonlyArray<Result>) => {
  for (const result of results) {
    if (result.status === 401) {
      expectError(result, 401, "UNAUTHENTICATED")
    } else {
      expectError(result, 429, "UNAUTHENTICATED")
      expect(result.body.error.message).toBe("Too many failed sign-ins; retry later.")
      const retryAfter = Number(result.headers.get("retry-after"))
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true)
    }
    expect(setCookieOf(result)).toBeNull()
  }
}

// Real time: each throttled attempt waits 1-8 s (in parallel), which is part of the behaviour.
describe("a parallel burst of sign-ins for one email (issue 10 §2)", () => {
  // A hashing queue long enough for the whole burst: this file is about the throttle, not the gate.
  layer(accountsTestLayer({ trustedProxies: ["127.0.0.1", "::1"], passwordHashing: { concurrency: 2, queue: 1000 } }).pipe(Layer.provideMerge(LogCapture.layer)), {
    timeout: 120_000,
    excludeTestServices: true
  })((it) => {
    it.effect("evaluates at most 10 passwords (+ the administrator reserve), and the right one is not told apart", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* createAccount("burst-admin@example.test", { password: PASSWORD })
        yield* bindInstallationAdmin(admin.principalId)
        const results = yield* burst(baseUrl, admin.email)
        expectOnly401Or429(results)
        const unauthenticated = results.filter((r) => r.status === 401).length
        expect(unauthenticated).toBe(10)
        expect(results.filter((r) => r.status === 429)).toHaveLength(BURST - 10)
        // The right password came after the budget was spent: the same 429 as its neighbours.
        expect(results[RIGHT_AT]!.status).toBe(429)
        expect(results[RIGHT_AT]!.body.error).toEqual(results[RIGHT_AT - 1]!.body.error)
        // Counted in the database: 10 ordinary evaluations and the reserve, nothing else checked.
        expect(yield* evaluatedRows("email_digest", admin.email)).toEqual({ evaluated: 10 + RESERVE, refused: BURST - 10 - RESERVE })
        // The reserve is spent: even the administrator's correct password waits for the window.
        expectError(yield* signIn(baseUrl, admin.email, PASSWORD), 429, "UNAUTHENTICATED")
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE sign_in_failures SET at = at - interval '61 seconds'`
        expectData(yield* signIn(baseUrl, admin.email, PASSWORD), 200, { authenticated: true })
      }))

    it.effect("a non-administrator's correct password in the burst is a 429 like every other throttled guess", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const member = yield* createAccount("burst-member@example.test", { password: PASSWORD })
        const results = yield* burst(baseUrl, member.email)
        expectOnly401Or429(results)
        expect(results.filter((r) => r.status === 401)).toHaveLength(10)
        expect(results[RIGHT_AT]!.status).toBe(429)
        expect(yield* evaluatedRows("email_digest", member.email)).toEqual({ evaluated: 10 + RESERVE, refused: BURST - 10 - RESERVE })
      }))

    it.effect("per client address behind a trusted proxy: at most 20 evaluations (+ the reserve) across emails", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const address = "203.0.113.50"
        const results = yield* Effect.all(
          Array.from({ length: BURST }, (_, i) =>
            signIn(baseUrl, `spray-${i}@example.test`, `wrong password ${i}`, { "x-forwarded-for": address })),
          { concurrency: "unbounded" }
        )
        expectOnly401Or429(results)
        expect(results.filter((r) => r.status === 401)).toHaveLength(20)
        expect(yield* evaluatedRows("client_address", address)).toEqual({ evaluated: 20 + RESERVE, refused: BURST - 20 - RESERVE })
      }))
  })
})
