import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectData, expectError, ORIGIN, PRODUCTION_ORIGIN, setCookieOf, signIn } from "./support/accountsServer.js"

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
  })
})
