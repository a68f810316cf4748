import { HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { digestOf, newOpaqueId, newToken } from "@svc/core/iam"
import { SessionId } from "@svc/core/schema"
import { SessionsRepo } from "@svc/core/db"
import { Data, Duration, Effect, Option } from "effect"
import type { AuthSettingsShape } from "./settings.js"
import { withExportedSpan } from "@svc/core/observability"

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

/** The account cannot sign in (disabled, revoked, unenrolled or deleted) when its session would be stored. */
export class AccountUnusable extends Data.TaggedError("AccountUnusable")<{}> {}

/**
 * Stores a new session for an account through the repository (joins the caller's transaction):
 * only the digest of the cookie value is kept. The account's state is checked by the insert
 * itself, so a disable that commits after the caller's own check still wins (AccountUnusable).
 */
export const storeSession = (
  sessions: SessionsRepo,
  accountId: string
): Effect.Effect<IssuedSession, SqlError | AccountUnusable> =>
  Effect.gen(function* () {
    const session = {
      id: SessionId.make(),
      token: newToken("svcs"),
      sessionKey: newOpaqueId(),
      expiresAt: new Date(Date.now() + Duration.toMillis(SESSION_TTL))
    }
    const stored = yield* sessions.insert({
      id: session.id,
      token_digest: digestOf(session.token),
      session_key: session.sessionKey,
      account_id: accountId,
      expires_at: session.expiresAt
    })
    if (Option.isNone(stored)) return yield* new AccountUnusable()
    return session
  }).pipe(withExportedSpan("Sessions.issue"))

/** `storeSession` with the ambient SqlClient, for tools and tests that seed sessions. */
export const issueSession = (
  accountId: string
): Effect.Effect<IssuedSession, SqlError | AccountUnusable, SqlClient.SqlClient> =>
  Effect.flatMap(SessionsRepo, (sessions) => storeSession(sessions, accountId)).pipe(Effect.provide(SessionsRepo.Default))

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
