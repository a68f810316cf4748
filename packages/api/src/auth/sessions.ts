import { HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { digestOf, newOpaqueId, newToken } from "@svc/core/iam"
import { SessionId } from "@svc/core/schema"
import { Duration, Effect } from "effect"
import type { AuthSettingsShape } from "./settings.js"

/** How long a session lasts (SPEC leaves it open: docs/decisions/identity.md). */
export const SESSION_TTL = Duration.hours(12)

export interface IssuedSession {
  readonly id: string
  /** The cookie value: a credential, sent only in `Set-Cookie`. */
  readonly token: string
  /** Non-credential, stable for the session's life (SPEC 5.2). */
  readonly sessionKey: string
  readonly expiresAt: Date
}

/** Creates a session for an account with the ambient SqlClient (joins the caller's transaction). */
export const issueSession = (accountId: string): Effect.Effect<IssuedSession, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const session = {
      id: SessionId.make(),
      token: newToken("svcs"),
      sessionKey: newOpaqueId(),
      expiresAt: new Date(Date.now() + Duration.toMillis(SESSION_TTL))
    }
    yield* sql`
      INSERT INTO sessions (id, token_digest, session_key, account_id, expires_at)
      VALUES (${session.id}, ${digestOf(session.token)}, ${session.sessionKey}, ${accountId}, ${session.expiresAt})
    `
    return session
  }).pipe(Effect.withSpan("Sessions.issue"))

/** Revokes one session; later requests with it get 401. */
export const revokeSession = (sessionId: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE sessions SET revoked_at = now() WHERE id = ${sessionId} AND revoked_at IS NULL`
  }).pipe(Effect.withSpan("Sessions.revoke"))

/** Revokes every session of an account (account revoke, disable). */
export const revokeAccountSessions = (accountId: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE sessions SET revoked_at = now() WHERE account_id = ${accountId} AND revoked_at IS NULL`
  }).pipe(Effect.withSpan("Sessions.revokeAccount"))

const cookieOptions = (settings: AuthSettingsShape) => ({
  httpOnly: true,
  sameSite: "lax" as const,
  path: "/",
  secure: settings.secureCookies,
  ...(settings.cookieDomain === undefined ? {} : { domain: settings.cookieDomain })
})

/** With native admin on, the host-only cookie of before is cleared whenever the session cookie is set or cleared. */
const clearHostOnly = (response: HttpServerResponse.HttpServerResponse, settings: AuthSettingsShape) =>
  settings.hostOnlyCookieName === undefined
    ? Effect.succeed(response)
    : HttpServerResponse.setCookie(response, settings.hostOnlyCookieName, "", {
      ...cookieOptions({ ...settings, cookieDomain: undefined }),
      maxAge: 0
    })

/**
 * SPEC 5.2: HttpOnly, SameSite=Lax, Path=/, Secure in production; SPEC 5.8: with native admin on,
 * the shared name scoped to the configured parent domain, and the host-only name cleared.
 */
export const setSessionCookie = (
  response: HttpServerResponse.HttpServerResponse,
  settings: AuthSettingsShape,
  session: IssuedSession
) =>
  HttpServerResponse.setCookie(response, settings.cookieName, session.token, {
    ...cookieOptions(settings),
    expires: session.expiresAt
  }).pipe(Effect.flatMap((withCookie) => clearHostOnly(withCookie, settings)))

/** Clears the session cookie (sign-out): the shared and the host-only name with native admin on. */
export const clearSessionCookie = (response: HttpServerResponse.HttpServerResponse, settings: AuthSettingsShape) =>
  HttpServerResponse.setCookie(response, settings.cookieName, "", { ...cookieOptions(settings), maxAge: 0 }).pipe(
    Effect.flatMap((cleared) => clearHostOnly(cleared, settings))
  )
