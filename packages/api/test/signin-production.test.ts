import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  accountsTestLayer,
  expectData,
  expectError,
  ORIGIN,
  PRODUCTION_ORIGIN,
  send,
  setCookieOf,
  signIn,
  tokenFrom
} from "./support/accountsServer.js"

const PASSWORD = "a long enough password"

const cookieAttributes = (header: string) => header.split(";").map((part) => part.trim())

describe("sign-in in production", () => {
  it.layer(accountsTestLayer({ production: true }), { timeout: 60_000 })((it) => {
    it.effect("sets __Secure-svc.session_token with Secure, HttpOnly, SameSite=Lax, Path=/", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("prod@example.test", { password: PASSWORD })
        const result = yield* signIn(baseUrl, "prod@example.test", PASSWORD, { origin: PRODUCTION_ORIGIN })
        expectData(result, 200, { authenticated: true })
        const attributes = cookieAttributes(setCookieOf(result)!)
        expect(attributes[0]).toMatch(/^__Secure-svc\.session_token=svcs_/)
        for (const attribute of ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"]) expect(attributes).toContain(attribute)
        // The development origin is not trusted here.
        expectError(yield* signIn(baseUrl, "prod@example.test", PASSWORD, { origin: ORIGIN }), 403, "FORBIDDEN")
      }))

    it.effect("the __Secure- cookie is the session; sign-out clears it with the same attributes", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("prod2@example.test", { password: PASSWORD, name: "Prod" })
        const result = yield* signIn(baseUrl, "prod2@example.test", PASSWORD)
        const token = tokenFrom(result, { production: true })
        const cookie = { cookie: `__Secure-svc.session_token=${token}` }
        expect((yield* send(baseUrl, "GET", "/api/auth/session", cookie)).body.data).toMatchObject({ email: "prod2@example.test" })
        // The development cookie name means nothing here.
        expectData(yield* send(baseUrl, "GET", "/api/auth/session", { cookie: `svc.session_token=${token}` }), 200, null)
        expectError(yield* send(baseUrl, "POST", "/api/auth/sign-out", { ...cookie, origin: ORIGIN }), 403, "FORBIDDEN")
        const out = yield* send(baseUrl, "POST", "/api/auth/sign-out", { ...cookie, origin: PRODUCTION_ORIGIN })
        expectData(out, 200, {})
        const cleared = cookieAttributes(setCookieOf(out)!)
        expect(cleared[0]).toBe("__Secure-svc.session_token=")
        for (const attribute of ["Max-Age=0", "Secure", "HttpOnly", "SameSite=Lax", "Path=/"]) expect(cleared).toContain(attribute)
        expectError(yield* send(baseUrl, "GET", "/api/auth/session", cookie), 401, "UNAUTHENTICATED")
      }))
  })
})
