/**
 * External sign-in end to end (SPEC 4.1, 5.2, 5.3): our real server on loopback against a real
 * OAuth 2 / OIDC server on loopback (oauth2-mock-server), over real HTTP, with a real database.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ApiGroupsLive, AuthSettings, ExternalSignInSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { MethodId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { createAccount, signedInSession } from "../../../testing/identity.js"
import { call, LogCapture, REQUEST_ID, serveForTest, TestServer } from "../../../testing/server.js"
import { MockOAuthProvider } from "./support/oauthProvider.js"
import {
  authorize,
  BINDING_COOKIE,
  callback,
  CookieJar,
  ORIGIN,
  type Provider,
  RECEIPT_COOKIE,
  result,
  SESSION_COOKIE,
  signIn,
  start
} from "./support/signInFlow.js"

const auth = AuthSettings.from({ baseUrl: ORIGIN, production: false })
const ATTEMPT_ID = /^[A-Za-z0-9_-]{43}$/
const CONSOLE = `${ORIGIN}/console/`
const CONSOLE_FAILED = `${ORIGIN}/console/?error=sign_in_failed`

/** The whole API with both providers configured against the mock provider. */
const app = Layer.unwrapEffect(
  Effect.map(MockOAuthProvider, (provider) => {
    const providers = {
      codehost: provider.config({ tokenEndpointAuthMethod: "client_secret_post" }),
      idprovider: provider.config()
    }
    return serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 })).pipe(
      Layer.provide(Layer.succeed(ExternalSignInSettings, ExternalSignInSettings.make({ baseUrl: ORIGIN, providers }))),
      Layer.provide(Layer.succeed(AuthSettings, auth)),
      Layer.provide(Layer.succeed(InstallationConfiguration, { ...defaultInstallationConfig, providers }))
    )
  })
).pipe(
  Layer.provideMerge(MockOAuthProvider.layer),
  Layer.provideMerge(LogCapture.layer),
  Layer.provideMerge(migratedDatabaseLayer)
)

/** An enrolled account with a password and an external identity of `provider`. */
const enrolled = (email: string, provider: Provider, subject: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const account = yield* createAccount(email)
    yield* sql`
      INSERT INTO account_methods (id, account_id, provider_id, subject)
      VALUES (${MethodId.make()}, ${account.userId}, ${provider}, ${subject})
    `
    return account
  })

const sessionsOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; session_key: string; expires_at: Date }>`
      SELECT id, session_key, expires_at FROM sessions WHERE account_id = ${userId} ORDER BY created_at
    `)

const expectError = (response: { status: number; body: unknown }, status: number, code: string) =>
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { error: { code, message: expect.any(String) }, meta: { requestId: expect.stringMatching(REQUEST_ID) } }
  })

const expectFailedCallback = (completed: { status: number; location: string | null; headers: Headers }) => {
  expect(completed.status).toBe(302)
  expect(completed.location).toBe(CONSOLE_FAILED)
  const cookies = completed.headers.getSetCookie()
  expect(cookies.some((line) => line.startsWith(`${SESSION_COOKIE}=`))).toBe(false)
  expect(cookies.some((line) => line.startsWith(`${RECEIPT_COOKIE}=`))).toBe(false)
}

const sessionRead = (baseUrl: string, cookie: string) =>
  Effect.promise(() => call(`${baseUrl}/api/auth/session`, { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } }))

describe("external sign-in", () => {
  it.layer(app, { timeout: 60_000 })((it) => {
    for (const [provider, subject] of [["codehost", "4242"], ["idprovider", "user-7f3a@idp.example"]] as const) {
      it.effect(`${provider}: start, provider, callback and result sign an enrolled account in`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TestServer
          const mock = yield* MockOAuthProvider
          const account = yield* enrolled(`happy-${provider}@example.com`, provider, subject)
          mock.as(subject)
          const jar = new CookieJar()

          const started = yield* start(baseUrl, provider, jar)
          expect(started.status).toBe(200)
          expect(started.body).toEqual({
            data: { attemptId: expect.stringMatching(ATTEMPT_ID), url: expect.any(String) },
            meta: { requestId: expect.stringMatching(REQUEST_ID) }
          })
          const url = new URL(started.body.data.url)
          expect(`${url.origin}${url.pathname}`).toBe(`${mock.issuer}/authorize`)
          expect(url.searchParams.get("response_type")).toBe("code")
          expect(url.searchParams.get("client_id")).toBe("svctest")
          expect(url.searchParams.get("redirect_uri")).toBe(`${ORIGIN}/api/auth/providers/${provider}/callback`)
          expect(url.searchParams.get("code_challenge_method")).toBe("S256")
          expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
          expect(url.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/)
          if (provider === "idprovider") {
            expect(url.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/)
            expect(url.searchParams.get("scope")).toBe("openid")
          } else {
            expect(url.searchParams.has("nonce")).toBe(false)
          }
          expect(jar.received).toEqual([
            expect.stringMatching(
              new RegExp(`^${BINDING_COOKIE}=[A-Za-z0-9_-]{43}; Max-Age=600; Path=/api/auth/providers/${provider}; HttpOnly; SameSite=Lax$`)
            )
          ])

          const redirect = yield* authorize(started.body.data.url)
          expect(`${redirect.origin}${redirect.pathname}`).toBe(`${ORIGIN}/api/auth/providers/${provider}/callback`)
          const completed = yield* callback(baseUrl, provider, redirect.search, jar)
          expect(completed.status).toBe(302)
          expect(completed.location).toBe(CONSOLE)
          const sessions = yield* sessionsOf(account.userId)
          expect(sessions).toHaveLength(1)
          expect(jar.cookies.has(BINDING_COOKIE)).toBe(false)
          const sessionCookie = jar.cookies.get(SESSION_COOKIE)!
          expect(sessionCookie).toMatch(/^svcs_/)
          expect(jar.cookies.get(RECEIPT_COOKIE)).toMatch(/^[A-Za-z0-9_-]{43}$/)
          expect(completed.headers.getSetCookie()).toEqual([
            `${BINDING_COOKIE}=; Max-Age=0; Path=/api/auth/providers/${provider}; HttpOnly; SameSite=Lax`,
            expect.stringMatching(new RegExp(`^${SESSION_COOKIE}=svcs_[A-Za-z0-9_-]{43}; Path=/; Expires=[^;]+; HttpOnly; SameSite=Lax$`)),
            expect.stringMatching(
              new RegExp(`^${RECEIPT_COOKIE}=[A-Za-z0-9_-]{43}; Max-Age=600; Path=/api/auth/providers/${provider}; HttpOnly; SameSite=Lax$`)
            )
          ])

          const redeemed = yield* result(baseUrl, provider, started.body.data.attemptId, jar)
          expect({ status: redeemed.status, body: redeemed.body }).toEqual({
            status: 200,
            body: { data: { sessionKey: sessions[0]!.session_key }, meta: { requestId: expect.stringMatching(REQUEST_ID) } }
          })
          // The receipt is cleared; no session cookie is issued or refreshed.
          expect(redeemed.headers.getSetCookie()).toEqual([
            `${RECEIPT_COOKIE}=; Max-Age=0; Path=/api/auth/providers/${provider}; HttpOnly; SameSite=Lax`
          ])

          const read = yield* sessionRead(baseUrl, sessionCookie)
          expect({ status: read.status, body: read.body }).toEqual({
            status: 200,
            body: {
              data: {
                authenticated: true,
                sessionKey: sessions[0]!.session_key,
                id: account.userId,
                email: account.email,
                name: account.email
              },
              meta: { requestId: expect.stringMatching(REQUEST_ID) }
            }
          })
        }))
    }

    it.effect("start needs the exact configured Origin and, when sent, Sec-Fetch-Site same-origin", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const before = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sign_in_attempts`
        for (const headers of <Array<Record<string, string>>>[
          {},
          { origin: "http://127.0.0.1:8081" },
          { origin: "https://127.0.0.1:8080" },
          { origin: "null" },
          { origin: ORIGIN, "sec-fetch-site": "cross-site" },
          { origin: ORIGIN, "sec-fetch-site": "same-site" }
        ]) {
          const jar = new CookieJar()
          const started = yield* start(baseUrl, "codehost", jar, headers)
          expectError(started, 403, "FORBIDDEN")
          expect(jar.received).toEqual([])
        }
        const after = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sign_in_attempts`
        expect(after[0]!.n).toBe(before[0]!.n)
        const sameOrigin = yield* start(baseUrl, "idprovider", new CookieJar(), { origin: ORIGIN, "sec-fetch-site": "same-origin" })
        expect(sameOrigin.status).toBe(200)
      }))

    it.effect("the callback fails closed, with one generic indication, for a tampered or missing state", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("tampered@example.com", "codehost", "5151")
        mock.as("5151")
        const jar = new CookieJar()
        const started = yield* start(baseUrl, "codehost", jar)
        const redirect = yield* authorize(started.body.data.url)
        const tampered = new URLSearchParams(redirect.search)
        tampered.set("state", `${tampered.get("state")!.slice(0, -1)}A`)
        expectFailedCallback(yield* callback(baseUrl, "codehost", `?${tampered}`, jar))
        const noState = new URLSearchParams(redirect.search)
        noState.delete("state")
        expectFailedCallback(yield* callback(baseUrl, "codehost", `?${noState}`, jar))
        // The state of one provider is no good at the other's callback.
        expectFailedCallback(yield* callback(baseUrl, "idprovider", redirect.search, jar))
        expect(yield* sessionsOf(account.userId)).toEqual([])
      }))

    it.effect("a replayed code (a second callback for one attempt) issues nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("replay@example.com", "idprovider", "replay-subject")
        mock.as("replay-subject")
        const first = yield* signIn(baseUrl, "idprovider")
        expect(first.completed.location).toBe(CONSOLE)
        // The same browser (binding cookie restored) replays the provider's redirect.
        const replay = new CookieJar()
        replay.cookies.set(BINDING_COOKIE, first.jar.received[0]!.split(";")[0]!.split("=")[1]!)
        expectFailedCallback(yield* callback(baseUrl, "idprovider", first.redirect.search, replay))
        expect(yield* sessionsOf(account.userId)).toHaveLength(1)
      }))

    it.effect("the callback completes only in the browser that started the attempt", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("binding@example.com", "codehost", "6161")
        mock.as("6161")
        const jar = new CookieJar()
        const started = yield* start(baseUrl, "codehost", jar)
        const redirect = yield* authorize(started.body.data.url)
        // Another browser (no binding cookie, or another one) cannot finish this attempt.
        const other = new CookieJar()
        other.cookies.set(BINDING_COOKIE, "x".repeat(43))
        expectFailedCallback(yield* callback(baseUrl, "codehost", redirect.search, other))
        expect(yield* sessionsOf(account.userId)).toEqual([])
        // The attempt was used up by that try.
        expectFailedCallback(yield* callback(baseUrl, "codehost", redirect.search, jar))
        expect(yield* sessionsOf(account.userId)).toEqual([])
      }))

    it.effect("an expired attempt issues nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("expired@example.com", "idprovider", "expired-subject")
        mock.as("expired-subject")
        const jar = new CookieJar()
        const started = yield* start(baseUrl, "idprovider", jar)
        const redirect = yield* authorize(started.body.data.url)
        yield* sql`UPDATE sign_in_attempts SET expires_at = now() - interval '1 second' WHERE id = ${started.body.data.attemptId}`
        expectFailedCallback(yield* callback(baseUrl, "idprovider", redirect.search, jar))
        expect(yield* sessionsOf(account.userId)).toEqual([])
      }))

    for (const [provider, subject] of [["codehost", "777000"], ["idprovider", "nobody@idp.example"]] as const) {
      it.effect(`${provider}: an identity no account has enrolled signs nobody in (no signup)`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TestServer
          const sql = yield* SqlClient.SqlClient
          const mock = yield* MockOAuthProvider
          mock.as(subject)
          const accountsBefore = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM accounts`
          const sessionsBefore = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sessions`
          const flow = yield* signIn(baseUrl, provider)
          expectFailedCallback(flow.completed)
          expect(yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM accounts`).toEqual(accountsBefore)
          expect(yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sessions`).toEqual(sessionsBefore)
          // The failure is logged with its reason, never answered with it.
          const logs = (yield* LogCapture).entries.filter((entry) => String(entry.message) === "external sign-in failed")
          expect(logs.at(-1)!.annotations).toMatchObject({
            provider,
            reason: "no enrolled, enabled account has this identity"
          })
        }))
    }

    it.effect("a disabled, a revoked or a not enrolled account is not signed in", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const mock = yield* MockOAuthProvider
        const disabled = yield* enrolled("disabled@example.com", "codehost", "8181")
        yield* sql`UPDATE accounts SET disabled = true WHERE id = ${disabled.userId}`
        const revoked = yield* enrolled("revoked@example.com", "codehost", "8282")
        yield* sql`UPDATE accounts SET revoked_at = now() WHERE id = ${revoked.userId}`
        const notEnrolled = yield* enrolled("not-enrolled@example.com", "codehost", "8383")
        yield* sql`UPDATE accounts SET enrolled_at = NULL WHERE id = ${notEnrolled.userId}`
        for (const [account, subject] of [[disabled, "8181"], [revoked, "8282"], [notEnrolled, "8383"]] as const) {
          mock.as(subject)
          const flow = yield* signIn(baseUrl, "codehost")
          expectFailedCallback(flow.completed)
          expect(yield* sessionsOf(account.userId)).toEqual([])
        }
      }))

    it.effect("a provider that refuses the code, denies access or returns a foreign ID token signs nobody in", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("refused@example.com", "idprovider", "refused-subject")
        mock.as("refused-subject")
        mock.server.service.once("beforeResponse", (response) => {
          response.statusCode = 400
          response.body = { error: "invalid_grant" }
        })
        expectFailedCallback((yield* signIn(baseUrl, "idprovider")).completed)
        mock.server.service.once("beforeAuthorizeRedirect", (redirect) => {
          redirect.url.searchParams.delete("code")
          redirect.url.searchParams.set("error", "access_denied")
        })
        expectFailedCallback((yield* signIn(baseUrl, "idprovider")).completed)
        // An ID token for another audience or with another nonce is rejected by the client.
        const otherAudience = (token: { payload: Record<string, unknown> }) => {
          if (token.payload["aud"] !== undefined) token.payload["aud"] = "someone-else"
        }
        mock.server.service.on("beforeTokenSigning", otherAudience)
        expectFailedCallback((yield* signIn(baseUrl, "idprovider")).completed)
        mock.server.service.off("beforeTokenSigning", otherAudience)
        const otherNonce = (token: { payload: Record<string, unknown> }) => {
          if (token.payload["nonce"] !== undefined) token.payload["nonce"] = "not-the-nonce-we-sent"
        }
        mock.server.service.on("beforeTokenSigning", otherNonce)
        expectFailedCallback((yield* signIn(baseUrl, "idprovider")).completed)
        mock.server.service.off("beforeTokenSigning", otherNonce)
        // An ID token from another issuer.
        const otherIssuer = (token: { payload: Record<string, unknown> }) => {
          if (token.payload["aud"] !== undefined) token.payload["iss"] = "http://127.0.0.1:1"
        }
        mock.server.service.on("beforeTokenSigning", otherIssuer)
        expectFailedCallback((yield* signIn(baseUrl, "idprovider")).completed)
        mock.server.service.off("beforeTokenSigning", otherIssuer)
        expect(yield* sessionsOf(account.userId)).toEqual([])
      }))

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
  })
})
