/**
 * External sign-in end to end (SPEC 4.1, 5.2, 5.3): our real server on loopback against a real
 * OAuth 2 / OIDC server on loopback (oauth2-mock-server), over real HTTP, with a real database.
 * `result` has its own file (external-signin-result.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { call, REQUEST_ID, TestServer } from "../../../testing/server.js"
import {
  CONSOLE,
  enrolled,
  expectError,
  expectFailedCallback,
  externalSignInApp,
  lastFailure,
  sessionsOf
} from "./support/externalSignInServer.js"
import { MockOAuthProvider } from "./support/oauthProvider.js"
import {
  authorize,
  BINDING_COOKIE,
  callback,
  CookieJar,
  ORIGIN,
  RECEIPT_COOKIE,
  result,
  SESSION_COOKIE,
  signIn,
  start
} from "./support/signInFlow.js"

const ATTEMPT_ID = /^[A-Za-z0-9_-]{43}$/

const sessionRead = (baseUrl: string, cookie: string) =>
  Effect.promise(() => call(`${baseUrl}/api/auth/session`, { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } }))

describe("external sign-in", () => {
  it.layer(externalSignInApp, { timeout: 60_000 })((it) => {
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
          const sql = yield* SqlClient.SqlClient
          const audit = yield* sql`
            SELECT outcome, actor_principal_id, resource_kind, resource_id, details, request_id FROM audit_events
            WHERE kind = 'authentication.external-sign-in' AND resource_id = ${account.userId}
          `
          expect(audit).toEqual([{
            outcome: "success",
            actor_principal_id: account.principalId,
            resource_kind: "account",
            resource_id: account.userId,
            details: { provider, methodId: expect.stringMatching(/^mth_/), sessionId: sessions[0]!.id },
            request_id: expect.stringMatching(REQUEST_ID)
          }])
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
        // Change the last character (to one it is not: replacing an "A" by "A" tampers nothing).
        const state = tampered.get("state")!
        tampered.set("state", `${state.slice(0, -1)}${state.endsWith("A") ? "B" : "A"}`)
        expectFailedCallback(yield* callback(baseUrl, "codehost", `?${tampered}`, jar))
        expect(yield* lastFailure).toMatchObject({ provider: "codehost", reason: "unknown or already used state" })
        const noState = new URLSearchParams(redirect.search)
        noState.delete("state")
        expectFailedCallback(yield* callback(baseUrl, "codehost", `?${noState}`, jar))
        expect(yield* lastFailure).toMatchObject({ reason: "no state" })
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
        expect(yield* lastFailure).toMatchObject({ reason: "unknown or already used state" })
        expect(yield* sessionsOf(account.userId)).toHaveLength(1)
      }))

    it.effect("two simultaneous callbacks for one attempt: exactly one signs in", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("race@example.com", "codehost", "3131")
        mock.as("3131")
        const jar = new CookieJar()
        const started = yield* start(baseUrl, "codehost", jar)
        const redirect = yield* authorize(started.body.data.url)
        const binding = jar.cookies.get(BINDING_COOKIE)!
        const browser = () => {
          const copy = new CookieJar()
          copy.cookies.set(BINDING_COOKIE, binding)
          return copy
        }
        const both = yield* Effect.all(
          [callback(baseUrl, "codehost", redirect.search, browser()), callback(baseUrl, "codehost", redirect.search, browser())],
          { concurrency: 2 }
        )
        expect(both.map((completed) => completed.location).sort()).toEqual([`${ORIGIN}/console/`, `${ORIGIN}/console/?error=sign_in_failed`])
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
        expect(yield* lastFailure).toMatchObject({ reason: "not the browser that started the attempt" })
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
        expect(yield* lastFailure).toMatchObject({ reason: "attempt expired" })
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
          expect(yield* lastFailure).toMatchObject({ provider, reason: "no enrolled, enabled account has this identity" })
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
        expect(yield* lastFailure).toMatchObject({ reason: "token response rejected", oauthError: "invalid_grant" })
        mock.server.service.once("beforeAuthorizeRedirect", (redirect) => {
          redirect.url.searchParams.delete("code")
          redirect.url.searchParams.set("error", "access_denied")
        })
        expectFailedCallback((yield* signIn(baseUrl, "idprovider")).completed)
        expect(yield* lastFailure).toMatchObject({ reason: "authorization response rejected", oauthError: "access_denied" })
        // ID tokens for another audience, with another nonce or from another issuer.
        const tamper = (claim: string, value: string) => (token: { payload: Record<string, unknown> }) => {
          if (token.payload["aud"] !== undefined) token.payload[claim] = value
        }
        for (const [claim, value] of [["aud", "someone-else"], ["nonce", "not-the-nonce-we-sent"], ["iss", "http://127.0.0.1:1"]]) {
          const listener = tamper(claim!, value!)
          mock.server.service.on("beforeTokenSigning", listener)
          const flow = yield* signIn(baseUrl, "idprovider").pipe(
            Effect.ensuring(Effect.sync(() => mock.server.service.off("beforeTokenSigning", listener)))
          )
          expectFailedCallback(flow.completed)
          expect(yield* lastFailure).toMatchObject({ reason: "token response rejected", code: "OAUTH_JWT_CLAIM_COMPARISON_FAILED" })
        }
        expect(yield* sessionsOf(account.userId)).toEqual([])
      }))
  })
})
