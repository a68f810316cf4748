import { HttpServerRequest } from "@effect/platform"
import { AccountReadOrigin, HumanSession, SessionInspection, SignInOrigin } from "@svc/core/api"
import { SqlClient } from "@effect/sql"
import { Forbidden, Unauthenticated } from "@svc/core/errors"
import type { Caller } from "@svc/core/iam"
import { Effect, Layer, Option } from "effect"
import { authenticate } from "../auth/authentication.js"
import { AuthSettings } from "../auth/settings.js"

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

/**
 * After `Authentication`: a request it let through with `x-api-key` carries a valid service key
 * (a supplied key takes precedence over a cookie, SPEC 5.1), which these endpoints refuse.
 */
export const HumanSessionLive = Layer.succeed(
  HumanSession,
  Effect.flatMap(HttpServerRequest.HttpServerRequest, ({ headers }) =>
    headers["x-api-key"] === undefined
      ? Effect.void
      : Effect.fail(new Unauthenticated({ message: "This operation needs a human session, not a service key." })))
)

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
