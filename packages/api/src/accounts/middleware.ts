import { HttpApiMiddleware, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { ErrorWire, Forbidden, Unauthenticated } from "@svc/core/errors"
import type { Caller } from "@svc/core/iam"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { authenticate } from "../auth/authentication.js"
import { AuthSettings } from "../auth/settings.js"

/**
 * SPEC 5.3 for sign-in: an `Origin`, when sent, must be the auth base URL's origin (a malformed
 * or different one is 403), and `Sec-Fetch-Site: cross-site` is rejected. A command-line client
 * may omit both headers.
 */
export class SignInOrigin extends HttpApiMiddleware.Tag<SignInOrigin>()("SignInOrigin", {
  failure: ErrorWire.FORBIDDEN
}) {}

export const SignInOriginLive = Layer.effect(
  SignInOrigin,
  Effect.map(AuthSettings, (settings) =>
    Effect.gen(function* () {
      const { headers } = yield* HttpServerRequest.HttpServerRequest
      const origin = headers["origin"]
      if (origin !== undefined && origin !== settings.trustedOrigin) {
        return yield* new Forbidden({ message: "The request's Origin is not trusted." })
      }
      if (headers["sec-fetch-site"] === "cross-site") {
        return yield* new Forbidden({ message: "Cross-site sign-in is not allowed." })
      }
    }))
)

/**
 * Account state reads (SPEC 4.1) need a trusted Origin; browsers send none on same-origin GETs,
 * so a read is refused only when it carries a different or malformed `Origin`, or a
 * `Sec-Fetch-Site` other than `same-origin` (docs/decisions/identity.md). Mutations are
 * covered by the authentication middleware.
 */
export class AccountReadOrigin extends HttpApiMiddleware.Tag<AccountReadOrigin>()("AccountReadOrigin", {
  failure: ErrorWire.FORBIDDEN
}) {}

export const AccountReadOriginLive = Layer.effect(
  AccountReadOrigin,
  Effect.map(AuthSettings, (settings) =>
    Effect.gen(function* () {
      const { headers } = yield* HttpServerRequest.HttpServerRequest
      const origin = headers["origin"]
      const site = headers["sec-fetch-site"]
      if ((origin !== undefined && origin !== settings.trustedOrigin) || (site !== undefined && site !== "same-origin")) {
        return yield* new Forbidden({ message: "The request's Origin is not trusted." })
      }
    }))
)

/** The session of `GET /api/auth/session`: none for an anonymous caller. */
export class InspectedSession extends Context.Tag("@svc/api/accounts/InspectedSession")<
  InspectedSession,
  Option.Option<Caller>
>() {}

/**
 * Session inspection (SPEC 5.2, 5.5.4): a request with no credential at all is anonymous; any
 * credential present is checked exactly as on a protected route (a forged, expired or revoked
 * session, or a mismatched session key, is 401). A service key never yields a session: 401.
 */
export class SessionInspection extends HttpApiMiddleware.Tag<SessionInspection>()("SessionInspection", {
  provides: InspectedSession,
  failure: Schema.Union(ErrorWire.UNAUTHENTICATED, ErrorWire.FORBIDDEN, ErrorWire.DEPENDENCY_UNAVAILABLE)
}) {}

export const SessionInspectionLive = Layer.effect(
  SessionInspection,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* AuthSettings
    return Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { headers } = request
      const anonymous = headers["authorization"] === undefined && headers["x-api-key"] === undefined &&
        headers["x-svc-session-key"] === undefined && request.cookies[settings.cookieName] === undefined
      if (anonymous) return Option.none<Caller>()
      const caller = yield* authenticate
      if (caller.credential._tag !== "Session") {
        return yield* new Unauthenticated({ message: "A service key has no session." })
      }
      return Option.some(caller)
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(AuthSettings, settings))
  })
)
