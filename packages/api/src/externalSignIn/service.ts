import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { AuditLog } from "@svc/core/audit"
import { SessionsRepo } from "@svc/core/db"
import { DependencyUnavailable, NotFound, Unauthenticated } from "@svc/core/errors"
import { newOpaqueId } from "@svc/core/iam"
import { Effect, Option } from "effect"
import { resolveSession } from "../auth/credentials.js"
import { readSessionCookie } from "../auth/sessionCookie.js"
import { setSessionCookie, storeSession } from "../auth/sessions.js"
import { AuthSettings, type AuthSettingsShape } from "../auth/settings.js"
import { SignInAttempts } from "./attempts.js"
import { bindingCookie, onResponse, readCookie, receiptCookie, withCookie, withoutCookie } from "./cookies.js"
import { authorizationRequest, callbackUrl, exchangeCode, type ProviderExchangeFailed } from "./oauth.js"
import { ExternalSignInSettings, type ExternalSignInSettingsShape, type ProviderId } from "./settings.js"
import { withExportedSpan } from "@svc/core/observability"

const unavailable = (error: SqlError) =>
  Effect.zipRight(
    Effect.logWarning("external sign-in could not reach the database", error),
    Effect.fail(new DependencyUnavailable({ message: "Sign-in is unavailable; retry later." }))
  )

const notConfigured = () => new NotFound({ message: "This sign-in provider is not configured." })

/** The console, where every callback ends; failures carry one generic indication only. */
const consoleUrl = (baseUrl: string, failed: boolean) =>
  failed ? `${baseUrl}/console/?error=sign_in_failed` : `${baseUrl}/console/`

interface Deps {
  readonly auth: AuthSettingsShape
  readonly settings: ExternalSignInSettingsShape
  readonly sql: SqlClient.SqlClient
}

type Failure = { readonly _tag: "SignInFailed"; readonly reason: string; readonly error?: ProviderExchangeFailed }
const failed = (reason: string, error?: ProviderExchangeFailed): Failure => ({ _tag: "SignInFailed", reason, error })

const causeSummary = (error: ProviderExchangeFailed | undefined) => {
  const cause = error?.cause as { message?: unknown; code?: unknown; error?: unknown } | undefined
  if (cause === undefined) return {}
  // Never the cause itself: oauth4webapi attaches response bodies, which may hold tokens.
  return {
    cause: typeof cause.message === "string" ? cause.message : "unknown",
    ...(typeof cause.code === "string" ? { code: cause.code } : {}),
    ...(typeof cause.error === "string" ? { oauthError: cause.error } : {})
  }
}

/** External sign-in with a code host or an identity provider (SPEC 5.3), unauthenticated. */
export class ExternalSignIn extends Effect.Service<ExternalSignIn>()("@svc/api/ExternalSignIn", {
  effect: Effect.gen(function* () {
    const ctx: Deps = {
      auth: yield* AuthSettings,
      settings: yield* ExternalSignInSettings,
      sql: yield* SqlClient.SqlClient
    }
    const attempts = yield* SignInAttempts
    const sessions = yield* SessionsRepo
    const audit = yield* AuditLog

    const start = (provider: ProviderId) =>
      Effect.gen(function* () {
        const config = ctx.settings.providers[provider]
        if (config === undefined) return yield* notConfigured()
        const request = yield* authorizationRequest(provider, config, callbackUrl(ctx.settings.baseUrl, provider))
        const attemptId = newOpaqueId()
        const binding = newOpaqueId()
        yield* attempts.create({
          id: attemptId,
          provider,
          state: request.state,
          binding,
          codeVerifier: request.codeVerifier,
          nonce: request.nonce
        })
        yield* onResponse((response) => withCookie(response, ctx.auth, provider, "signin_attempt", binding))
        return { attemptId, url: request.url }
      }).pipe(
        Effect.catchTag("SqlError", unavailable),
        withExportedSpan("ExternalSignIn.start", { attributes: { provider } })
      )

    /**
     * The provider's redirect back. Every outcome is a 302 to the console; only a complete,
     * matching, unexpired attempt in the browser that started it, a successful code exchange and
     * an enrolled, enabled account with that identity issue a session (and the result receipt).
     */
    const callback = (provider: ProviderId, request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function* () {
        const config = ctx.settings.providers[provider]
        if (config === undefined) return yield* Effect.fail(failed("provider not configured"))
        const parameters = new URL(request.url, ctx.settings.baseUrl).searchParams
        const state = parameters.get("state")
        if (state === null || state.length === 0 || state.length > 512) return yield* Effect.fail(failed("no state"))
        const attempt = yield* attempts.consume({ provider, state, binding: readCookie(request, bindingCookie(ctx.auth)) })
        if (Option.isNone(attempt)) return yield* Effect.fail(failed("unknown or already used state"))
        if (attempt.value.expired) return yield* Effect.fail(failed("attempt expired"))
        if (!attempt.value.boundToBrowser) return yield* Effect.fail(failed("not the browser that started the attempt"))
        const redirectUri = callbackUrl(ctx.settings.baseUrl, provider)
        const subject = yield* exchangeCode({
          provider,
          config,
          redirectUri,
          callbackParameters: parameters,
          expectedState: state,
          codeVerifier: attempt.value.codeVerifier,
          nonce: attempt.value.nonce
        }).pipe(Effect.mapError((error) => failed(error.reason, error)))
        const account = yield* attempts.findAccountBySubject(provider, subject)
        if (Option.isNone(account)) return yield* Effect.fail(failed("no enrolled, enabled account has this identity"))
        const receipt = newOpaqueId()
        const { id: accountId, methodId, principalId } = account.value
        const session = yield* ctx.sql.withTransaction(
          Effect.tap(storeSession(sessions, accountId), (session) =>
            Effect.zipRight(
              attempts.complete({ id: attempt.value.id, sessionId: session.id, receipt }),
              audit.record({
                kind: "authentication.external-sign-in",
                outcome: "success",
                actorPrincipalId: principalId,
                resource: { kind: "account", id: accountId },
                details: { provider, methodId, sessionId: session.id }
              })
            ))
        ).pipe(
          // Disabled (or revoked) after the lookup above: as if it had been before.
          Effect.catchTag("AccountUnusable", () => Effect.fail(failed("no enrolled, enabled account has this identity")))
        )
        yield* Effect.logInfo("external sign-in succeeded").pipe(
          Effect.annotateLogs({ provider, accountId, sessionId: session.id })
        )
        const redirect = withoutCookie(
          HttpServerResponse.redirect(consoleUrl(ctx.settings.baseUrl, false), { status: 302 }),
          ctx.auth,
          provider,
          "signin_attempt"
        )
        const withSession = yield* setSessionCookie(redirect, ctx.auth, session).pipe(Effect.orDie)
        return withCookie(withSession, ctx.auth, provider, "signin_receipt", receipt)
      }).pipe(
        Effect.catchTag("SignInFailed", (failure) =>
          Effect.logWarning("external sign-in failed").pipe(
            Effect.annotateLogs({ provider, reason: failure.reason, ...causeSummary(failure.error) }),
            Effect.as(
              withoutCookie(
                HttpServerResponse.redirect(consoleUrl(ctx.settings.baseUrl, true), { status: 302 }),
                ctx.auth,
                provider,
                "signin_attempt"
              )
            )
          )),
        Effect.catchTag("SqlError", unavailable),
        withExportedSpan("ExternalSignIn.callback", { attributes: { provider } })
      )

    /**
     * Redeems the callback's one-use receipt for the key of the session the callback issued. The
     * caller must present that very session's cookie; nothing is issued or extended here.
     */
    const result = (
      provider: ProviderId,
      request: HttpServerRequest.HttpServerRequest,
      attemptId: string
    ) =>
      Effect.gen(function* () {
        if (ctx.settings.providers[provider] === undefined) return yield* notConfigured()
        const receipt = readCookie(request, receiptCookie(ctx.auth))
        if (receipt === undefined) return yield* new Unauthenticated({ message: "The sign-in receipt is missing." })
        const token = yield* readSessionCookie(request, ctx.auth.cookieName)
        const session = Option.isNone(token)
          ? Option.none()
          : yield* resolveSession(token.value).pipe(Effect.provideService(SqlClient.SqlClient, ctx.sql))
        if (Option.isNone(session) || session.value.credential._tag !== "Session") {
          return yield* new Unauthenticated({ message: "The session of this sign-in is missing, invalid or revoked." })
        }
        const sessionKey = yield* attempts.redeemReceipt({
          attemptId,
          provider,
          receipt,
          sessionId: session.value.credential.sessionId
        })
        if (Option.isNone(sessionKey)) {
          return yield* new Unauthenticated({ message: "The sign-in receipt is invalid, used or expired." })
        }
        yield* onResponse((response) => withoutCookie(response, ctx.auth, provider, "signin_receipt"))
        return { sessionKey: sessionKey.value }
      }).pipe(
        Effect.catchTag("SqlError", unavailable),
        withExportedSpan("ExternalSignIn.result", { attributes: { provider } })
      )

    return { start, callback, result }
  }),
  dependencies: [SignInAttempts.Default, SessionsRepo.Default, AuditLog.Default]
}) {}
