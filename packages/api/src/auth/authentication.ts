import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Authentication } from "@svc/core/api"
import { SqlClient } from "@effect/sql"
import { DependencyUnavailable, Forbidden, Unauthenticated } from "@svc/core/errors"
import type { Caller } from "@svc/core/iam"
import { Effect, Layer, Option } from "effect"
import { resolveServiceKey, resolveSession } from "./credentials.js"
import { type Preauthorization, routeKey } from "./preauthorization.js"
import { isSafeMethod, isTrustedBrowserMutation } from "./origin.js"
import { AuthSettings } from "./settings.js"

const unauthenticated = (message = "Authentication is required.") => new Unauthenticated({ message })

/** A `x-svc-session-key` narrows a request to one session; anything else about it is a 401. */
const checkSessionKey = (header: string | undefined, caller: Caller): Effect.Effect<void, Unauthenticated> => {
  if (header === undefined) return Effect.void
  const matches = caller.credential._tag === "Session" && !header.includes(",") && header === caller.credential.sessionKey
  return matches ? Effect.void : Effect.fail(unauthenticated("The session key does not match this session."))
}

/**
 * Authenticates the request from storage. With a `preauthorization`, the credential statement
 * also decides it (and reads its row) for the handler; the credential checks are the same.
 */
export const authenticateWith = (preauthorization: Preauthorization | undefined): Effect.Effect<
  Caller,
  Unauthenticated | Forbidden | DependencyUnavailable,
  HttpServerRequest.HttpServerRequest | SqlClient.SqlClient | AuthSettings
> => Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const settings = yield* AuthSettings
  const headers = request.headers
  // Bearer (or any) Authorization credentials are not accepted, alone or beside a cookie.
  if (headers["authorization"] !== undefined) {
    return yield* unauthenticated("Authorization headers are not accepted; use a session or x-api-key.")
  }
  const apiKey = headers["x-api-key"]
  if (apiKey !== undefined) {
    // A supplied key wins over a cookie, and an invalid key never falls back to it.
    const resolved = yield* resolveServiceKey(apiKey, preauthorization)
    if (Option.isNone(resolved)) return yield* unauthenticated("The service key is invalid, expired or revoked.")
    if (resolved.value === "scope-changed") {
      return yield* new Forbidden({ message: "The key's principal changed scope; issue a new key." })
    }
    return resolved.value
  }
  const token = request.cookies[settings.cookieName]
  if (token === undefined || token.length === 0) return yield* unauthenticated()
  const session = yield* resolveSession(token, preauthorization)
  if (Option.isNone(session)) return yield* unauthenticated("The session is invalid, expired or revoked.")
  yield* checkSessionKey(headers["x-svc-session-key"], session.value)
  if (!isSafeMethod(request.method) && !isTrustedBrowserMutation(headers, settings.trustedOrigin)) {
    return yield* new Forbidden({ message: "The request's Origin is not trusted." })
  }
  return session.value
}).pipe(
  Effect.catchTag("SqlError", (error) =>
    Effect.zipRight(
      Effect.logWarning("authentication could not reach the database", error),
      Effect.fail(new DependencyUnavailable({ message: "Authentication is unavailable; retry later." }))
    )
  ),
  Effect.withSpan("Auth.authenticate", { captureStackTrace: false })
)

export const authenticate = authenticateWith(undefined)

/**
 * The Authentication middleware. An endpoint given in `preauthorizations` (found by its route)
 * gets its decision and row from the credential statement; every other endpoint is authenticated
 * alone and authorizes in its handler.
 */
export const authenticationLayer = (preauthorizations: ReadonlyArray<Preauthorization> = []) =>
  Layer.effect(
    Authentication,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const settings = yield* AuthSettings
      const provide = <A, E>(effect: Effect.Effect<A, E, HttpServerRequest.HttpServerRequest | SqlClient.SqlClient | AuthSettings>) =>
        effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(AuthSettings, settings))
      const folded = new Map(preauthorizations.map((p) => [routeKey(p.endpoint.method, p.endpoint.path), provide(authenticateWith(p))]))
      const alone = provide(authenticate)
      if (folded.size === 0) return alone
      return Effect.flatMap(HttpRouter.RouteContext, ({ route }) => folded.get(routeKey(route.method, route.path)) ?? alone)
    })
  )

export const AuthenticationLive = authenticationLayer()
