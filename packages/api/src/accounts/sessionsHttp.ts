import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { Sessions } from "./sessions.js"
import { SignIn } from "./signIn.js"

export const AuthSessionsLive = HttpApiBuilder.group(SvcApi, "authSessions", (handlers) =>
  Effect.gen(function* () {
    const signIn = yield* SignIn
    const sessions = yield* Sessions
    return handlers
      .handle("signInEmail", ({ payload, request }) => signIn.password(payload, request))
      .handle("signOut", () => sessions.signOut())
      .handle("session", () => sessions.current())
      .handle("providers", () => sessions.providers())
  })
)
