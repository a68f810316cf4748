import { HttpApp, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SignInThrottled, SignInThrottledWire } from "@svc/core/api"
import { AccountsRepo, SessionsRepo } from "@svc/core/db"
import { DependencyUnavailable, Unauthenticated } from "@svc/core/errors"
import { digestOf } from "@svc/core/iam"
import { Effect, Option, Schema } from "effect"
import { clientAddressOf } from "../auth/clientAddress.js"
import { type HashingBusy, makeHashGate } from "../auth/hashGate.js"
import { DECOY_HASH, verifyPassword } from "../auth/passwords.js"
import { setSessionCookie, storeSession } from "../auth/sessions.js"
import { AuthSettings } from "../auth/settings.js"
import { administersInstallation } from "./grants.js"
import { anyExternalProvider, enabledProviders, warnIfPasswordOnly } from "./providers.js"
import { SignInThrottle, Throttled, throttleDelay, type ThrottleState } from "./throttle.js"
import { withExportedSpan } from "@svc/core/observability"

const badCredentials = new Unauthenticated({ message: "The email or password is incorrect." })

/**
 * SPEC 5.1: `Authorization` headers are rejected and bearer credentials unsupported, here as on
 * every protected route. Refused before the attempt reaches the throttle, so it counts as none.
 */
const authorizationRefused = new Unauthenticated({
  message: "Authorization headers are not accepted; sign in with the email and password in the body."
})

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

/** What the gated part of a sign-in decided; the throttle's wait happens outside the gate. */
type Outcome =
  | { readonly _tag: "SignedIn"; readonly accountId: string }
  | { readonly _tag: "Failed" }
  | { readonly _tag: "Throttled"; readonly state: ThrottleState }

/**
 * Email and password sign-in (SPEC 5.2, 5.4), unauthenticated. One `HashGate` per server, made
 * when this service is built (issue 10 §3).
 */
export class SignIn extends Effect.Service<SignIn>()("@svc/api/SignIn", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* AccountsRepo
    const sessions = yield* SessionsRepo
    const throttle = yield* SignInThrottle
    const settings = yield* AuthSettings
    const providers = yield* enabledProviders
    const sessionBinding = anyExternalProvider(providers)
    const gate = yield* makeHashGate(settings.passwordHashing)
    yield* warnIfPasswordOnly(providers, settings.behindTrustedProxy)

    /**
     * Reserve, look up, check: the database and argon2 work of one attempt. The attempt is
     * reserved with the throttle before anything else, so concurrent attempts cannot all pass a
     * count read before any of them failed. The password is verified, against a decoy hash when
     * no account has the email, so timing does not tell whether it exists. A disabled, revoked
     * or unenrolled account fails exactly like a wrong password. Within the administrator
     * reserve only an Installation administrator's correct password signs in.
     */
    const evaluate = (normalized: string, password: string, clientAddress: string | null) =>
      Effect.gen(function* () {
        const reservation = yield* throttle.reserve(digestOf(normalized), clientAddress)
        const throttled: Outcome = { _tag: "Throttled", state: reservation.state }
        if (reservation.admission === "refuse") return throttled
        const account = Option.getOrUndefined(yield* accounts.findPasswordAccount(normalized))
        const matches = yield* verifyPassword(account?.password_hash ?? DECOY_HASH, password)
        const signsIn = account !== undefined && account.usable && matches
        if (reservation.admission === "reserve") {
          const exempt = signsIn &&
            (yield* administersInstallation(account.principal_id).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
          if (!exempt) return throttled
        }
        if (!signsIn) return { _tag: "Failed" } as const
        yield* throttle.release(reservation.id)
        return { _tag: "SignedIn", accountId: account.id } as const
      })

    /**
     * The work of `evaluate` runs through the gate: over its bound the attempt is refused with
     * `HashingBusy` before touching the database, so a flood of sign-ins cannot take the
     * connections and cores authenticated traffic needs. A throttled attempt then waits 1-8 s,
     * holding no slot, and is refused with `Throttled`.
     */
    const signInWithPassword = (email: string, password: string, clientAddress: string | null) =>
      Effect.gen(function* () {
        const outcome = yield* gate.run(evaluate(email.toLowerCase(), password, clientAddress))
        switch (outcome._tag) {
          case "SignedIn":
            // Disabled or revoked since `evaluate` looked: the same 401 as if it had been before.
            return yield* storeSession(sessions, outcome.accountId).pipe(
              Effect.catchTag("AccountUnusable", () => badCredentials)
            )
          case "Failed":
            return yield* badCredentials
          case "Throttled":
            yield* Effect.sleep(throttleDelay(outcome.state))
            return yield* new Throttled({ retryAfterSeconds: outcome.state.retryAfterSeconds })
        }
      }).pipe(
        // Authentication fails closed when its storage is unreachable (SPEC 5.9): 503, never a guess.
        Effect.catchTag("SqlError", (error) =>
          Effect.zipRight(
            Effect.logWarning("sign-in could not reach the database", error),
            Effect.fail(new DependencyUnavailable({ message: "Sign-in is unavailable; retry later." }))
          )),
        withExportedSpan("SignIn.password")
      )

    /** `POST /api/auth/sign-in/email`: the session cookie on success, 429 or 503 with `Retry-After`. */
    const password = (
      payload: { readonly email: string; readonly password: string },
      request: HttpServerRequest.HttpServerRequest
    ) => {
      if (request.headers["authorization"] !== undefined) return Effect.fail(authorizationRefused)
      return signInWithPassword(
        payload.email,
        payload.password,
        clientAddressOf(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], settings.trustedProxies)
      ).pipe(
        Effect.tap((session) =>
          HttpApp.appendPreResponseHandler((_request, response) => Effect.orDie(setSessionCookie(response, settings, session)))
        ),
        Effect.map((session) =>
          sessionBinding ? { authenticated: true as const, sessionKey: session.sessionKey } : { authenticated: true as const }
        ),
        Effect.catchTags({ Throttled: throttledResponse, HashingBusy: hashingBusy })
      )
    }

    return { password }
  }),
  dependencies: [AccountsRepo.Default, SessionsRepo.Default, SignInThrottle.Default]
}) {}
