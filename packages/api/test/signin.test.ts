import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import {
  accountsTestLayer,
  expectData,
  expectError,
  ORIGIN,
  send,
  setCookieOf,
  signIn,
  tokenFrom
} from "./support/accountsServer.js"

const PASSWORD = "a long enough password"

const cookieAttributes = (header: string) => header.split(";").map((part) => part.trim())

describe("POST /api/auth/sign-in/email (password-only Installation, development)", () => {
  it.layer(accountsTestLayer().pipe(Layer.provideMerge(LogCapture.layer)), { timeout: 60_000 })((it) => {
    it.effect("signs in: 200 {authenticated: true}, the session only in an HttpOnly, SameSite=Lax, Path=/ cookie", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("ada@example.test", { password: PASSWORD, name: "Ada" })
        const result = yield* signIn(baseUrl, "ada@example.test", PASSWORD)
        expectData(result, 200, { authenticated: true })
        const header = setCookieOf(result)!
        const attributes = cookieAttributes(header)
        expect(attributes[0]).toMatch(/^svc\.session_token=svcs_[A-Za-z0-9_-]{43}$/)
        expect(attributes).toContain("HttpOnly")
        expect(attributes).toContain("SameSite=Lax")
        expect(attributes).toContain("Path=/")
        expect(attributes.some((a) => /^Expires=/.test(a))).toBe(true)
        expect(attributes).not.toContain("Secure")
        const token = tokenFrom(result)
        expect(result.text).not.toContain(token)
        expect(result.text).not.toContain(PASSWORD)
        // The cookie is a working session.
        const session = yield* send(baseUrl, "GET", "/api/auth/session", { cookie: `svc.session_token=${token}` })
        expect(session.status).toBe(200)
        expect(session.body.data).toMatchObject({ authenticated: true, email: "ada@example.test", name: "Ada" })
      }))

    it.effect("normalizes the email to lowercase", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("grace@example.test", { password: PASSWORD })
        expectData(yield* signIn(baseUrl, "Grace@EXAMPLE.test", PASSWORD), 200, { authenticated: true })
      }))

    it.effect("a wrong password and an unknown email are the same 401 UNAUTHENTICATED, with no cookie", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("alan@example.test", { password: PASSWORD })
        const wrong = yield* signIn(baseUrl, "alan@example.test", "not the right password")
        const unknown = yield* signIn(baseUrl, "nobody@example.test", PASSWORD)
        expectError(wrong, 401, "UNAUTHENTICATED")
        expectError(unknown, 401, "UNAUTHENTICATED")
        expect(wrong.body.error.message).toBe(unknown.body.error.message)
        expect(setCookieOf(wrong)).toBeNull()
        expect(setCookieOf(unknown)).toBeNull()
      }))

    it.effect("disabled, revoked and unenrolled accounts cannot sign in (401)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const disabled = yield* createAccount("disabled@example.test", { password: PASSWORD })
        const revoked = yield* createAccount("revoked@example.test", { password: PASSWORD })
        const unenrolled = yield* createAccount("unenrolled@example.test", { password: PASSWORD })
        yield* sql`UPDATE accounts SET disabled = true WHERE id = ${disabled.userId}`
        yield* sql`UPDATE accounts SET revoked_at = now() WHERE id = ${revoked.userId}`
        yield* sql`UPDATE accounts SET enrolled_at = NULL WHERE id = ${unenrolled.userId}`
        for (const email of [disabled.email, revoked.email, unenrolled.email]) {
          const result = yield* signIn(baseUrl, email, PASSWORD)
          expectError(result, 401, "UNAUTHENTICATED")
          expect(setCookieOf(result)).toBeNull()
        }
      }))

    it.effect("Origin: an untrusted or malformed Origin is 403; cross-site without Origin is 403; a CLI may omit both", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("origin@example.test", { password: PASSWORD })
        const attempt = (headers: Record<string, string>) => signIn(baseUrl, "origin@example.test", PASSWORD, headers)
        for (const origin of ["https://evil.example", "null", "not a url", `${ORIGIN}/`, "http://127.0.0.1:8081"]) {
          const result = yield* attempt({ origin })
          expectError(result, 403, "FORBIDDEN")
          expect(setCookieOf(result)).toBeNull()
        }
        expectError(yield* attempt({ "sec-fetch-site": "cross-site" }), 403, "FORBIDDEN")
        expectError(yield* attempt({ origin: ORIGIN, "sec-fetch-site": "cross-site" }), 403, "FORBIDDEN")
        expectData(yield* attempt({}), 200, { authenticated: true })
        expectData(yield* attempt({ origin: ORIGIN, "sec-fetch-site": "same-origin" }), 200, { authenticated: true })
        expectData(yield* attempt({ "sec-fetch-site": "same-origin" }), 200, { authenticated: true })
      }))

    it.effect("an Authorization header is refused (401, no cookie), whatever its scheme, and is no attempt the throttle counts", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("bearer@example.test", { password: PASSWORD })
        const basic = `Basic ${Buffer.from(`bearer@example.test:${PASSWORD}`).toString("base64")}`
        // Twelve refusals, past the limit of 10 failures a minute for this email (SPEC 5.4).
        for (const authorization of [...Array.from({ length: 11 }, () => "Bearer abc"), basic]) {
          const result = yield* signIn(baseUrl, "bearer@example.test", PASSWORD, { authorization, origin: ORIGIN })
          expectError(result, 401, "UNAUTHENTICATED")
          expect(result.body.error.message).toBe(
            "Authorization headers are not accepted; sign in with the email and password in the body."
          )
          expect(setCookieOf(result)).toBeNull()
        }
        // The same request without the header signs in: none of the twelve was counted.
        expectData(yield* signIn(baseUrl, "bearer@example.test", PASSWORD, { origin: ORIGIN }), 200, { authenticated: true })
      }))

    it.effect("the body is checked: lengths, unknown fields, missing fields, media type", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const post = (body: unknown, headers: Record<string, string> = {}) =>
          send(baseUrl, "POST", "/api/auth/sign-in/email", headers, body)
        expectError(yield* post({ email: "a@b.c", password: "short" }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/password" }
        ])
        expectError(yield* post({ email: "a@b.c", password: "x".repeat(129) }), 400, "INVALID_REQUEST", [
          { code: "TOO_LONG", path: "/password" }
        ])
        expectError(yield* post({ email: "ab", password: PASSWORD }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/email" }
        ])
        expectError(yield* post({ email: "a@b.c", password: PASSWORD, remember: true }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/remember" }
        ])
        expectError(yield* post({ password: PASSWORD }), 400, "INVALID_REQUEST", [{ code: "REQUIRED", path: "/email" }])
        expectError(yield* post("email=a", { "content-type": "text/plain" }), 415, "UNSUPPORTED_MEDIA_TYPE")
        expectError(yield* post("{", {}), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "" }])
      }))

    it.effect("GET /api/auth/providers: none enabled, no session binding", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectData(yield* send(baseUrl, "GET", "/api/auth/providers"), 200, {
          codehost: false,
          idprovider: false,
          sessionBinding: false
        })
      }))

    it.effect("logs authentication.sign-in-limit-warning at start-up (password-only profile)", () =>
      Effect.gen(function* () {
        const { entries } = yield* LogCapture
        const warnings = entries.filter((entry) => JSON.stringify(entry.message).includes("authentication.sign-in-limit-warning"))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]!.level).toBe("WARN")
        expect(warnings[0]!.annotations["event"]).toBe("authentication.sign-in-limit-warning")
      }))
  })
})

