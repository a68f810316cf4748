import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Authentication } from "@svc/core/api"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DependencyUnavailable, Forbidden, Unauthenticated } from "@svc/core/errors"
import type { Caller } from "@svc/core/iam"
import { PgPool } from "@svc/core/db"
import { withExportedSpan } from "@svc/core/observability"
import { Effect, Layer, Option } from "effect"
import type pg from "pg"
import { credentialResolvers } from "./credentials.js"
import { type Preauthorization, routeKey } from "./preauthorization.js"
import { isSafeMethod, isTrustedBrowserMutation } from "./origin.js"
import { readSessionCookie } from "./sessionCookie.js"
import { AuthSettings, type AuthSettingsShape } from "./settings.js"

const unauthenticated = (message = "Authentication is required.") => new Unauthenticated({ message })

/** A step of authentication: the caller, or why there is none. */
type Outcome = Effect.Effect<Caller, Unauthenticated | Forbidden>
const refuse = (error: Unauthenticated | Forbidden): Outcome => Effect.fail(error)

/** A `x-svc-session-key` narrows a request to one session; anything else about it is a 401. */
const sessionKeyMismatch = (header: string | undefined, caller: Caller): Unauthenticated | undefined => {
  if (header === undefined) return undefined
  const matches = caller.credential._tag === "Session" && !header.includes(",") && header === caller.credential.sessionKey
  return matches ? undefined : unauthenticated("The session key does not match this session.")
}

/**
 * Authenticates a request from storage, over one SqlClient and AuthSettings (taken once, so a
 * request provides nothing), its credential statements named on `pool` when given. With a
 * `preauthorization`, the credential statement also decides it (and reads its row) for the
 * handler; the credential checks are the same.
 */
export const authenticator = (sql: SqlClient.SqlClient, settings: AuthSettingsShape, pool?: pg.Pool) => {
  const resolve = credentialResolvers(sql, pool)
  return (preauthorization: Preauthorization | undefined): Effect.Effect<
    Caller,
    Unauthenticated | Forbidden | DependencyUnavailable,
    HttpServerRequest.HttpServerRequest
  > => Effect.flatMap(HttpServerRequest.HttpServerRequest, (request): Effect.Effect<Caller, Unauthenticated | Forbidden | SqlError> => {
    const headers = request.headers
    // Bearer (or any) Authorization credentials are not accepted, alone or beside a cookie.
    if (headers["authorization"] !== undefined) {
      return refuse(unauthenticated("Authorization headers are not accepted; use a session or x-api-key."))
    }
    const apiKey = headers["x-api-key"]
    if (apiKey !== undefined) {
      // A supplied key wins over a cookie, and an invalid key never falls back to it.
      return Effect.flatMap(resolve.serviceKey(apiKey, preauthorization), (resolved): Outcome => {
        if (Option.isNone(resolved)) return refuse(unauthenticated("The service key is invalid, expired or revoked."))
        if (resolved.value === "scope-changed") {
          return refuse(new Forbidden({ message: "The key's principal changed scope; issue a new key." }))
        }
        return Effect.succeed(resolved.value)
      })
    }
    const sessionCaller = (token: string) =>
      Effect.flatMap(resolve.session(token, preauthorization), (session): Outcome => {
        if (Option.isNone(session)) return refuse(unauthenticated("The session is invalid, expired or revoked."))
        const mismatch = sessionKeyMismatch(headers["x-svc-session-key"], session.value)
        if (mismatch !== undefined) return refuse(mismatch)
        if (!isSafeMethod(request.method) && !isTrustedBrowserMutation(headers, settings.trustedOrigin)) {
          return refuse(new Forbidden({ message: "The request's Origin is not trusted." }))
        }
        return Effect.succeed(session.value)
      })
    return Effect.flatMap(
      readSessionCookie(request, settings.cookieName),
      (token) => (Option.isNone(token) ? refuse(unauthenticated()) : sessionCaller(token.value))
    )
  }).pipe(
    Effect.catchTag("SqlError", (error) =>
      Effect.zipRight(
        Effect.logWarning("authentication could not reach the database", error),
        Effect.fail(new DependencyUnavailable({ message: "Authentication is unavailable; retry later." }))
      )
    ),
    withExportedSpan("Auth.authenticate")
  )
}

/** Authenticates the request with the SqlClient and AuthSettings of the context. */
export const authenticate: Effect.Effect<
  Caller,
  Unauthenticated | Forbidden | DependencyUnavailable,
  HttpServerRequest.HttpServerRequest | SqlClient.SqlClient | AuthSettings
> = Effect.flatMap(Effect.zip(SqlClient.SqlClient, AuthSettings), ([sql, settings]) => authenticator(sql, settings)(undefined))

/**
 * The Authentication middleware. An endpoint given in `preauthorizations` (found by its route)
 * gets its decision and row from the credential statement; every other endpoint is authenticated
 * alone and authorizes in its handler.
 */
export const authenticationLayer = (preauthorizations: ReadonlyArray<Preauthorization> = []) =>
  Layer.effect(
    Authentication,
    Effect.gen(function* () {
      const authenticateWith = authenticator(yield* SqlClient.SqlClient, yield* AuthSettings, yield* PgPool)
      const folded = new Map(preauthorizations.map((p) => [routeKey(p.endpoint.method, p.endpoint.path), authenticateWith(p)]))
      const alone = authenticateWith(undefined)
      if (folded.size === 0) return alone
      return Effect.flatMap(HttpRouter.RouteContext, ({ route }) => folded.get(routeKey(route.method, route.path)) ?? alone)
    })
  )

export const AuthenticationLive = authenticationLayer()
