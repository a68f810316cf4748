import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { superuserQuery } from "../../../testing/database.js"
import { createAccount, createServicePrincipal, insertServiceKey, signedInSession } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  accountsTestLayer,
  browser,
  cookieHeader,
  expectData,
  expectError,
  ORIGIN,
  send,
  setCookieOf,
  signIn
} from "./support/accountsServer.js"

const PASSWORD = "a long enough password"
const FORGED = "svcs_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

const session = (baseUrl: string, headers: Record<string, string> = {}) => send(baseUrl, "GET", "/api/auth/session", headers)
const signOut = (baseUrl: string, headers: Record<string, string> = {}) => send(baseUrl, "POST", "/api/auth/sign-out", headers)

const seeded = (email: string) =>
  Effect.gen(function* () {
    const account = yield* createAccount(email, { password: PASSWORD, name: `Name of ${email}` })
    const issued = yield* signedInSession(account.userId)
    return { account, issued }
  })

describe("sessions: GET /api/auth/session and POST /api/auth/sign-out", () => {
  it.layer(accountsTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("anonymous: 200 with data null", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectData(yield* session(baseUrl), 200, null)
      }))

    it.effect("a session: exactly {authenticated, sessionKey, id, email, name}", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const { account, issued } = yield* seeded("reader@example.test")
        expectData(yield* session(baseUrl, cookieHeader(issued.token)), 200, {
          authenticated: true,
          sessionKey: issued.sessionKey,
          id: account.userId,
          email: account.email,
          name: `Name of ${account.email}`
        })
      }))

    it.effect("a forged, empty, expired or revoked session cookie is 401; sessions are read from storage each request", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        expectError(yield* session(baseUrl, cookieHeader(FORGED)), 401, "UNAUTHENTICATED")
        expectError(yield* session(baseUrl, cookieHeader("")), 401, "UNAUTHENTICATED")
        const expired = yield* seeded("expired@example.test")
        yield* sql`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = ${expired.issued.id}`
        expectError(yield* session(baseUrl, cookieHeader(expired.issued.token)), 401, "UNAUTHENTICATED")
        const revoked = yield* seeded("revoked@example.test")
        expect((yield* session(baseUrl, cookieHeader(revoked.issued.token))).status).toBe(200)
        yield* sql`UPDATE sessions SET revoked_at = now() WHERE id = ${revoked.issued.id}`
        expectError(yield* session(baseUrl, cookieHeader(revoked.issued.token)), 401, "UNAUTHENTICATED")
        const disabled = yield* seeded("disabled@example.test")
        yield* sql`UPDATE accounts SET disabled = true WHERE id = ${disabled.account.userId}`
        expectError(yield* session(baseUrl, cookieHeader(disabled.issued.token)), 401, "UNAUTHENTICATED")
      }))

    it.effect("a service key cannot see or create a session (401), nor can an Authorization header", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const principal = yield* createServicePrincipal("automation")
        const { key } = yield* insertServiceKey(principal)
        const keyed = yield* session(baseUrl, { "x-api-key": key })
        expectError(keyed, 401, "UNAUTHENTICATED")
        expect(setCookieOf(keyed)).toBeNull()
        expectError(yield* session(baseUrl, { "x-api-key": "svck_invalid" }), 401, "UNAUTHENTICATED")
        expectError(yield* session(baseUrl, { authorization: "Bearer whatever" }), 401, "UNAUTHENTICATED")
      }))

    it.effect("x-svc-session-key narrows to the session: a foreign, malformed or duplicated key is 401", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mine = yield* seeded("narrow@example.test")
        const other = yield* seeded("other@example.test")
        const cookie = cookieHeader(mine.issued.token)
        expect((yield* session(baseUrl, { ...cookie, "x-svc-session-key": mine.issued.sessionKey })).status).toBe(200)
        for (const key of [other.issued.sessionKey, "not-a-key", `${mine.issued.sessionKey}, ${mine.issued.sessionKey}`]) {
          expectError(yield* session(baseUrl, { ...cookie, "x-svc-session-key": key }), 401, "UNAUTHENTICATED")
        }
        // A session key alone is not a credential.
        expectError(yield* session(baseUrl, { "x-svc-session-key": mine.issued.sessionKey }), 401, "UNAUTHENTICATED")
      }))

    it.effect("sign-out revokes the session and clears the cookie; the session is then 401", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("leaver@example.test", { password: PASSWORD })
        const signedIn = yield* signIn(baseUrl, "leaver@example.test", PASSWORD)
        const token = /svc\.session_token=([^;]+)/.exec(setCookieOf(signedIn)!)![1]!
        const result = yield* signOut(baseUrl, browser(token))
        expectData(result, 200, {})
        const cleared = setCookieOf(result)!.split(";").map((part) => part.trim())
        expect(cleared[0]).toBe("svc.session_token=")
        for (const attribute of ["Max-Age=0", "HttpOnly", "SameSite=Lax", "Path=/"]) expect(cleared).toContain(attribute)
        expectError(yield* session(baseUrl, cookieHeader(token)), 401, "UNAUTHENTICATED")
        expectError(yield* signOut(baseUrl, browser(token)), 401, "UNAUTHENTICATED")
      }))

    it.effect("sign-out: 401 without a session; 403 without a trusted Origin, and the session stays", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectError(yield* signOut(baseUrl), 401, "UNAUTHENTICATED")
        expectError(yield* signOut(baseUrl, { origin: ORIGIN }), 401, "UNAUTHENTICATED")
        const { issued } = yield* seeded("origin@example.test")
        const cookie = cookieHeader(issued.token)
        for (const headers of [
          cookie,
          { ...cookie, origin: "https://evil.example" },
          { ...cookie, origin: "null" },
          { ...cookie, origin: ORIGIN, "sec-fetch-site": "cross-site" },
          { ...cookie, origin: ORIGIN, "sec-fetch-site": "same-site" }
        ]) {
          const result = yield* signOut(baseUrl, headers)
          expectError(result, 403, "FORBIDDEN")
          expect(setCookieOf(result)).toBeNull()
        }
        expect((yield* session(baseUrl, cookie)).status).toBe(200)
      }))

    it.effect("sign-out with a foreign or malformed x-svc-session-key: 401, neither revokes nor clears", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mine = yield* seeded("keep@example.test")
        const other = yield* seeded("foreign@example.test")
        for (const key of [other.issued.sessionKey, "malformed key"]) {
          const result = yield* signOut(baseUrl, { ...browser(mine.issued.token), "x-svc-session-key": key })
          expectError(result, 401, "UNAUTHENTICATED")
          expect(setCookieOf(result)).toBeNull()
        }
        expect((yield* session(baseUrl, cookieHeader(mine.issued.token))).status).toBe(200)
        // With its own key it signs out.
        const own = yield* signOut(baseUrl, { ...browser(mine.issued.token), "x-svc-session-key": mine.issued.sessionKey })
        expectData(own, 200, {})
      }))

    it.effect("sign-out with a service key is 401 (there is no session to end)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const principal = yield* createServicePrincipal("signs-out")
        const { key } = yield* insertServiceKey(principal)
        expectError(yield* signOut(baseUrl, { "x-api-key": key }), 401, "UNAUTHENTICATED")
      }))

    it.effect("sign-out whose revoke the database refuses (not a lost connection) is 503 DEPENDENCY_UNAVAILABLE; the session and cookie stay", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const { issued } = yield* seeded("refused-revoke@example.test")
        // A real statement error (SQLSTATE P0001) on the revoke only; reads still work.
        yield* sql.unsafe(`
          CREATE OR REPLACE FUNCTION test_refuse_revoke() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.revoked_at IS NOT NULL THEN RAISE EXCEPTION 'session store refused'; END IF;
            RETURN NEW;
          END $$`)
        yield* sql.unsafe(`CREATE TRIGGER test_refuse_revoke BEFORE UPDATE ON sessions FOR EACH ROW EXECUTE FUNCTION test_refuse_revoke()`)
        const refused = yield* signOut(baseUrl, browser(issued.token)).pipe(
          Effect.ensuring(Effect.orDie(sql.unsafe(`DROP TRIGGER test_refuse_revoke ON sessions`)))
        )
        expectError(refused, 503, "DEPENDENCY_UNAVAILABLE")
        expect(refused.body.error.message).toBe("Authentication is unavailable; retry later.")
        expect(setCookieOf(refused)).toBeNull()
        expect(yield* sql`SELECT revoked_at FROM sessions WHERE id = ${issued.id}`).toEqual([{ revoked_at: null }])
        expect((yield* session(baseUrl, cookieHeader(issued.token))).status).toBe(200)
        // The retry, once the store accepts it, signs out.
        expectData(yield* signOut(baseUrl, browser(issued.token)), 200, {})
        expectError(yield* session(baseUrl, cookieHeader(issued.token)), 401, "UNAUTHENTICATED")
      }))

    // Last: it takes the database away for a moment.
    it.effect("503 DEPENDENCY_UNAVAILABLE when the database is unreachable; anonymous inspection needs none", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const { issued } = yield* seeded("outage@example.test")
        const name = (yield* sql<{ name: string }>`SELECT current_database() AS name`)[0]!.name
        const quoted = `"${name.replace(/"/g, '""')}"`
        yield* Effect.promise(() => superuserQuery(`ALTER DATABASE ${quoted} WITH ALLOW_CONNECTIONS false`))
        yield* Effect.promise(() =>
          superuserQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name])
        )
        const outcome = yield* Effect.all([
          session(baseUrl, cookieHeader(issued.token)),
          signIn(baseUrl, "outage@example.test", PASSWORD),
          session(baseUrl)
        ]).pipe(
          Effect.ensuring(Effect.promise(() => superuserQuery(`ALTER DATABASE ${quoted} WITH ALLOW_CONNECTIONS true`)))
        )
        expectError(outcome[0], 503, "DEPENDENCY_UNAVAILABLE")
        expectError(outcome[1], 503, "DEPENDENCY_UNAVAILABLE")
        expect(setCookieOf(outcome[1])).toBeNull()
        expectData(outcome[2], 200, null)
      }))
  })
})
