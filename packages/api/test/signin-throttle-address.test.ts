import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectError } from "./support/accountsServer.js"
import { signIn } from "./support/accountsServer.js"

const WRONG = "definitely the wrong one"

/** 20 failures from one client address, each with a different (unknown) email. */
const failFromAddress = (baseUrl: string, address: string, count: number) =>
  Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
    Effect.map(signIn(baseUrl, `spray-${address}-${i}@example.test`, WRONG, { "x-forwarded-for": address }), (result) =>
      expectError(result, 401, "UNAUTHENTICATED")))

// The test client connects from 127.0.0.1: trusting it makes X-Forwarded-For name the client.
describe("per-client-address sign-in limits behind a trusted proxy", () => {
  layer(accountsTestLayer({ trustedProxies: ["127.0.0.1", "::1"] }).pipe(Layer.provideMerge(LogCapture.layer)), {
    timeout: 120_000,
    excludeTestServices: true
  })((it) => {
    it.effect("after 20 failures from one address (any emails): 429 with Retry-After for that address only", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* failFromAddress(baseUrl, "203.0.113.7", 20)
        const throttled = yield* signIn(baseUrl, "fresh@example.test", WRONG, { "x-forwarded-for": "203.0.113.7" })
        expectError(throttled, 429, "UNAUTHENTICATED")
        expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        // Another client behind the same proxy is not affected.
        expectError(yield* signIn(baseUrl, "fresh@example.test", WRONG, { "x-forwarded-for": "203.0.113.8" }), 401, "UNAUTHENTICATED")
      }))

    it.effect("does not warn that browsers share an address", () =>
      Effect.gen(function* () {
        const { entries } = yield* LogCapture
        expect(entries.some((entry) => JSON.stringify(entry.message).includes("sign-in-limit-warning"))).toBe(false)
      }))
  })
})

describe("without a trusted proxy", () => {
  layer(accountsTestLayer().pipe(Layer.provideMerge(LogCapture.layer)), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("X-Forwarded-For is ignored: no per-address limit a client could spoof or trip for others", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* failFromAddress(baseUrl, "203.0.113.9", 22)
        expectError(
          yield* signIn(baseUrl, "another@example.test", WRONG, { "x-forwarded-for": "203.0.113.9" }),
          401,
          "UNAUTHENTICATED"
        )
      }))
  })
})

// The test client connects from 127.0.0.1, which is not one of these proxies: a client that
// bypasses the ingress. Its peer address is the key, whatever it forwards.
describe("a direct client while a trusted proxy is configured", () => {
  layer(accountsTestLayer({ trustedProxies: ["10.0.0.0/8"] }), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("after 20 failures from its peer address (other emails each time, forged X-Forwarded-For): 429 with Retry-After", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) =>
          Effect.map(
            signIn(baseUrl, `direct-${i}@example.test`, WRONG, { "x-forwarded-for": `198.51.100.${i}` }),
            (result) => expectError(result, 401, "UNAUTHENTICATED")
          ))
        const throttled = yield* signIn(baseUrl, "direct-fresh@example.test", WRONG, { "x-forwarded-for": "198.51.100.99" })
        expectError(throttled, 429, "UNAUTHENTICATED")
        expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      }))
  })
})
