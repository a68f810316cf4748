import { HttpApp } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { InspectedSession } from "@svc/core/api"
import { AccountsRepo, SessionsRepo } from "@svc/core/db"
import { DependencyUnavailable, Unauthenticated } from "@svc/core/errors"
import { CurrentCaller } from "@svc/core/iam"
import { Effect, Option } from "effect"
import { clearSessionCookie } from "../auth/sessions.js"
import { AuthSettings } from "../auth/settings.js"
import { anyExternalProvider, enabledProviders } from "./providers.js"
import { exportedFn } from "@svc/core/observability"

/**
 * SPEC 5.9: the session store failing, however it fails, is authentication unavailable (503),
 * never a 500 and never a guess.
 */
const authenticationUnavailable = (action: string) => (error: SqlError) =>
  Effect.zipRight(
    Effect.logWarning(`${action} could not reach the database`, error),
    Effect.fail(new DependencyUnavailable({ message: "Authentication is unavailable; retry later." }))
  )

/** The caller's own session: sign-out, what the session is, and which providers are on. */
export class Sessions extends Effect.Service<Sessions>()("@svc/api/Sessions", {
  effect: Effect.gen(function* () {
    const accounts = yield* AccountsRepo
    const sessions = yield* SessionsRepo
    const settings = yield* AuthSettings
    const providers = yield* enabledProviders
    const sessionBinding = anyExternalProvider(providers)

    const signOut = exportedFn("Sessions.signOut")(function* () {
      const caller = yield* CurrentCaller
      if (caller.credential._tag !== "Session") {
        return yield* new Unauthenticated({ message: "Sign-out needs a session." })
      }
      // Not revoked means not signed out: the cookie is kept, so the client knows to retry.
      yield* sessions.revoke(caller.credential.sessionId).pipe(Effect.catchTag("SqlError", authenticationUnavailable("sign-out")))
      yield* HttpApp.appendPreResponseHandler((_request, response) => Effect.orDie(clearSessionCookie(response, settings)))
      return {}
    })

    /** The inspected session's account, or null without one (SessionInspection ran first). */
    const current = exportedFn("Sessions.current")(function* () {
      const inspected = yield* InspectedSession
      if (Option.isNone(inspected)) return null
      const credential = inspected.value.credential
      if (credential._tag !== "Session") return null
      const account = yield* accounts.findProfile(credential.accountId).pipe(
        Effect.catchTag("SqlError", authenticationUnavailable("session inspection"))
      )
      if (Option.isNone(account)) return yield* new Unauthenticated({ message: "The session is invalid, expired or revoked." })
      const { id, email, name } = account.value
      return { authenticated: true as const, sessionKey: credential.sessionKey, id, email, name }
    })

    const enabled = () => Effect.succeed({ codehost: providers.codehost, idprovider: providers.idprovider, sessionBinding })

    return { signOut, current, providers: enabled }
  }),
  dependencies: [AccountsRepo.Default, SessionsRepo.Default]
}) {}
