/**
 * `POST /api/auth/providers/{provider}/result` (SPEC 4.1): the configured Origin, the one-use
 * receipt cookie of the callback, the matching attemptId and the session the callback issued;
 * it never issues or extends a session.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createAccount, signedInSession } from "../../../testing/identity.js"
import { REQUEST_ID, TestServer } from "../../../testing/server.js"
import { CONSOLE, enrolled, expectError, externalSignInApp, sessionsOf } from "./support/externalSignInServer.js"
import { MockOAuthProvider } from "./support/oauthProvider.js"
import { CookieJar, ORIGIN, RECEIPT_COOKIE, result, SESSION_COOKIE, signIn, start } from "./support/signInFlow.js"

const copyOf = (original: CookieJar) => {
  const jar = new CookieJar()
  for (const [name, value] of original.cookies) jar.cookies.set(name, value)
  return jar
}

describe("external sign-in result", () => {
  it.layer(externalSignInApp, { timeout: 60_000 })((it) => {
    it.effect("result needs the receipt, the matching attemptId and the session the callback issued; once", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("receipt@example.com", "codehost", "9191")
        mock.as("9191")
        const flow = yield* signIn(baseUrl, "codehost")
        expect(flow.completed.location).toBe(CONSOLE)
        const session = flow.jar.cookies.get(SESSION_COOKIE)!
        const receipt = flow.jar.cookies.get(RECEIPT_COOKIE)!
        const jarWith = (cookies: Record<string, string>) => {
          const jar = new CookieJar()
          for (const [name, value] of Object.entries(cookies)) jar.cookies.set(name, value)
          return jar
        }
        // No receipt; a forged receipt; no session; another account's session.
        expectError(yield* result(baseUrl, "codehost", flow.attemptId, jarWith({ [SESSION_COOKIE]: session })), 401, "UNAUTHENTICATED")
        expectError(
          yield* result(baseUrl, "codehost", flow.attemptId, jarWith({ [SESSION_COOKIE]: session, [RECEIPT_COOKIE]: "y".repeat(43) })),
          401,
          "UNAUTHENTICATED"
        )
        expectError(yield* result(baseUrl, "codehost", flow.attemptId, jarWith({ [RECEIPT_COOKIE]: receipt })), 401, "UNAUTHENTICATED")
        const other = yield* createAccount("other-session@example.com")
        const otherSession = yield* signedInSession(other.userId)
        expectError(
          yield* result(baseUrl, "codehost", flow.attemptId, jarWith({ [SESSION_COOKIE]: otherSession.token, [RECEIPT_COOKIE]: receipt })),
          401,
          "UNAUTHENTICATED"
        )
        // Another attempt's id, and the right receipt at the other provider's result.
        const otherAttempt = yield* start(baseUrl, "codehost", new CookieJar())
        expectError(yield* result(baseUrl, "codehost", otherAttempt.body.data.attemptId, flow.jar), 401, "UNAUTHENTICATED")
        expectError(yield* result(baseUrl, "idprovider", flow.attemptId, flow.jar), 401, "UNAUTHENTICATED")
        // A malformed attemptId is a request error.
        const malformed = yield* result(baseUrl, "codehost", "short", flow.jar)
        expect({ status: malformed.status, body: malformed.body }).toEqual({
          status: 400,
          body: {
            error: { code: "INVALID_REQUEST", message: expect.any(String), details: [{ code: "INVALID_FORMAT", path: "/attemptId" }] },
            meta: { requestId: expect.stringMatching(REQUEST_ID) }
          }
        })
        // A wrong Origin is refused before anything else.
        const { jar } = flow
        expectError(yield* result(baseUrl, "codehost", flow.attemptId, jar, { origin: "http://evil.example" }), 403, "FORBIDDEN")
        expectError(yield* result(baseUrl, "codehost", flow.attemptId, jar, {}), 403, "FORBIDDEN")
        expectError(
          yield* result(baseUrl, "codehost", flow.attemptId, jar, { origin: ORIGIN, "sec-fetch-site": "cross-site" }),
          403,
          "FORBIDDEN"
        )

        // None of that used the receipt up; the real thing works, and only once.
        const before = yield* sessionsOf(account.userId)
        const redeemed = yield* result(baseUrl, "codehost", flow.attemptId, jarWith({ [SESSION_COOKIE]: session, [RECEIPT_COOKIE]: receipt }))
        expect(redeemed.status).toBe(200)
        expect(redeemed.body.data).toEqual({ sessionKey: before[0]!.session_key })
        const again = yield* result(baseUrl, "codehost", flow.attemptId, jarWith({ [SESSION_COOKIE]: session, [RECEIPT_COOKIE]: receipt }))
        expectError(again, 401, "UNAUTHENTICATED")
        expect(again.headers.getSetCookie()).toEqual([])
        // result never issued or extended a session.
        expect(yield* sessionsOf(account.userId)).toEqual(before)
        expect(yield* sessionsOf(other.userId)).toHaveLength(1)
      }))

    it.effect("result refuses a revoked session and an expired receipt", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("receipt-expired@example.com", "idprovider", "expiring")
        mock.as("expiring")
        const expired = yield* signIn(baseUrl, "idprovider")
        yield* sql`UPDATE sign_in_attempts SET receipt_expires_at = now() - interval '1 second' WHERE id = ${expired.attemptId}`
        expectError(yield* result(baseUrl, "idprovider", expired.attemptId, expired.jar), 401, "UNAUTHENTICATED")
        const revoked = yield* signIn(baseUrl, "idprovider")
        yield* sql`UPDATE sessions SET revoked_at = now() WHERE account_id = ${account.userId}`
        expectError(yield* result(baseUrl, "idprovider", revoked.attemptId, revoked.jar), 401, "UNAUTHENTICATED")
      }))

    it.effect("result refuses a duplicated session cookie (401) without using the receipt up", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        yield* enrolled("receipt-twice@example.com", "codehost", "9393")
        mock.as("9393")
        const flow = yield* signIn(baseUrl, "codehost")
        const planted = yield* signedInSession((yield* createAccount("receipt-planted@example.com")).userId)
        // A jar holds one value per name; a browser sends a sibling host's cookie of the same name too.
        const twice = copyOf(flow.jar)
        const header = `${twice.header()}; ${SESSION_COOKIE}=${planted.token}`
        twice.header = () => header
        const refused = yield* result(baseUrl, "codehost", flow.attemptId, twice)
        expectError(refused, 401, "UNAUTHENTICATED")
        expect(refused.body.error.message).toBe("The session cookie is ambiguous: it was sent more than once.")
        expect((yield* result(baseUrl, "codehost", flow.attemptId, flow.jar)).status).toBe(200)
      }))

    it.effect("two simultaneous redemptions of one receipt: exactly one succeeds", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        yield* enrolled("receipt-race@example.com", "codehost", "9292")
        mock.as("9292")
        const flow = yield* signIn(baseUrl, "codehost")
        const copy = () => copyOf(flow.jar)
        const both = yield* Effect.all(
          [result(baseUrl, "codehost", flow.attemptId, copy()), result(baseUrl, "codehost", flow.attemptId, copy())],
          { concurrency: 2 }
        )
        expect(both.map((response) => response.status).sort()).toEqual([200, 401])
      }))
  })
})
