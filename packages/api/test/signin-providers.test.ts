import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectData, send, signIn, tokenFrom } from "./support/accountsServer.js"

const PASSWORD = "a long enough password"


describe("sign-in with an external provider enabled", () => {
  it.layer(accountsTestLayer({ providers: ["codehost"] }).pipe(Layer.provideMerge(LogCapture.layer)), { timeout: 60_000 })((it) => {
    it.effect("returns a sessionKey: new per sign-in, the one GET /session reports", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("key@example.test", { password: PASSWORD })
        const first = yield* signIn(baseUrl, "key@example.test", PASSWORD)
        const second = yield* signIn(baseUrl, "key@example.test", PASSWORD)
        expect(first.status).toBe(200)
        expect(Object.keys(first.body.data).sort()).toEqual(["authenticated", "sessionKey"])
        const key = first.body.data.sessionKey as string
        expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(second.body.data.sessionKey).not.toBe(key)
        expect(key).not.toBe(tokenFrom(first))
        const session = yield* send(baseUrl, "GET", "/api/auth/session", { cookie: `svc.session_token=${tokenFrom(first)}` })
        expect(session.body.data.sessionKey).toBe(key)
        // Stable across reads.
        const again = yield* send(baseUrl, "GET", "/api/auth/session", { cookie: `svc.session_token=${tokenFrom(first)}` })
        expect(again.body.data.sessionKey).toBe(key)
      }))

    it.effect("GET /api/auth/providers reports the provider and session binding; no start-up warning", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectData(yield* send(baseUrl, "GET", "/api/auth/providers"), 200, {
          codehost: true,
          idprovider: false,
          sessionBinding: true
        })
        const { entries } = yield* LogCapture
        expect(entries.some((entry) => JSON.stringify(entry.message).includes("sign-in-limit-warning"))).toBe(false)
      }))
  })
})

