import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { DependencyUnavailable, Unauthenticated } from "@svc/core/errors"
import { CurrentCaller } from "@svc/core/iam"
import { Effect, Option, Schema } from "effect"
import { SvcApi } from "@svc/core/api"
import { AuthSettings } from "../auth/settings.js"
import { clearSessionCookie, revokeSession, setSessionCookie } from "../auth/sessions.js"
import { InspectedSession } from "@svc/core/api"
import { anyExternalProvider, enabledProviders, warnIfPasswordOnly } from "./providers.js"
import { clientAddressOf } from "../auth/clientAddress.js"
import { HashGate, type HashingBusy, makeHashGate } from "../auth/hashGate.js"
import { SignInThrottled, SignInThrottledWire } from "@svc/core/api"
import { signInWithPassword } from "./signIn.js"
import type { Throttled } from "./throttle.js"

const encodeThrottled = Schema.encode(SignInThrottledWire)

/** The 429 of SPEC 5.4 as documented by `SignInThrottledWire`, with `Retry-After`. */
const throttledResponse = (throttled: Throttled) =>
  encodeThrottled(new SignInThrottled({ message: "Too many failed sign-ins; retry later." })).pipe(
    Effect.flatMap((body) =>
      HttpServerResponse.json(body, { status: 429, headers: { "retry-after": String(throttled.retryAfterSeconds) } })
    ),
    Effect.orDie
  )

/** Sign-in refused for load (issue 10 §3): 503 `DEPENDENCY_UNAVAILABLE` with `Retry-After`. */
const hashingBusy = (busy: HashingBusy) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(busy.retryAfterSeconds)))
    ),
    Effect.fail(new DependencyUnavailable({ message: "Sign-in is busy; retry later." }))
  )

export const AuthSessionsLive = HttpApiBuilder.group(SvcApi, "authSessions", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* AuthSettings
    const providers = yield* enabledProviders
    const sessionBinding = anyExternalProvider(providers)
    const hashGate = yield* makeHashGate(settings.passwordHashing)
    yield* warnIfPasswordOnly(providers, settings.behindTrustedProxy)
    return handlers
      .handle("signInEmail", ({ payload, request }) =>
        signInWithPassword(
          payload.email,
          payload.password,
          clientAddressOf(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], settings.trustedProxies)
        ).pipe(
          Effect.tap((session) =>
            HttpApp.appendPreResponseHandler((_request, response) =>
              Effect.orDie(setSessionCookie(response, settings, session))
            )
          ),
          Effect.map((session) =>
            sessionBinding ? { authenticated: true as const, sessionKey: session.sessionKey } : { authenticated: true as const }
          ),
          Effect.catchTags({ Throttled: throttledResponse, HashingBusy: hashingBusy }),
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.provideService(HashGate, hashGate)
        ))
      .handle("signOut", () =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          if (caller.credential._tag !== "Session") {
            return yield* new Unauthenticated({ message: "Sign-out needs a session." })
          }
          yield* revokeSession(caller.credential.sessionId).pipe(Effect.orDie)
          yield* HttpApp.appendPreResponseHandler((_request, response) =>
            Effect.orDie(clearSessionCookie(response, settings))
          )
          return {}
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
      .handle("session", () =>
        Effect.gen(function* () {
          const inspected = yield* InspectedSession
          if (Option.isNone(inspected)) return null
          const credential = inspected.value.credential
          if (credential._tag !== "Session") return null
          const rows = yield* sql<{ id: string; email: string; name: string }>`
            SELECT id, email, name FROM accounts WHERE id = ${credential.accountId}
          `.pipe(
            Effect.catchTag("SqlError", () =>
              Effect.fail(new DependencyUnavailable({ message: "Authentication is unavailable; retry later." })))
          )
          const account = rows[0]
          if (account === undefined) return yield* new Unauthenticated({ message: "The session is invalid, expired or revoked." })
          return { authenticated: true as const, sessionKey: credential.sessionKey, id: account.id, email: account.email, name: account.name }
        }))
      .handle("providers", () =>
        Effect.succeed({ codehost: providers.codehost, idprovider: providers.idprovider, sessionBinding }))
  })
)
