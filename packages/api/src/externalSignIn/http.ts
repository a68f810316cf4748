import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import type { SqlError } from "@effect/sql/SqlError"
import { DependencyUnavailable, Forbidden, NotFound, Unauthenticated } from "@svc/core/errors"
import { newOpaqueId } from "@svc/core/iam"
import { Effect, Layer, Option } from "effect"
import { SvcApi } from "@svc/core/api"
import { resolveSession } from "../auth/credentials.js"
import { isTrustedBrowserMutation } from "../auth/origin.js"
import { issueSession, setSessionCookie } from "../auth/sessions.js"
import { AuthSettings, type AuthSettingsShape } from "../auth/settings.js"
import { BrowserOrigin } from "@svc/core/api"
import { completeAttempt, consumeAttempt, createAttempt, findAccountBySubject, redeemReceipt } from "./attempts.js"
import { bindingCookie, onResponse, readCookie, receiptCookie, withCookie, withoutCookie } from "./cookies.js"
import { authorizationRequest, callbackUrl, exchangeCode, type ProviderExchangeFailed } from "./oauth.js"
import { ExternalSignInSettings, type ExternalSignInSettingsShape, type ProviderId } from "./settings.js"

/** SPEC 4.1 / 5.3: `start` and `result` need the exact configured Origin (403 otherwise). */
export const BrowserOriginLive = Layer.effect(
  BrowserOrigin,
  Effect.map(AuthSettings, (settings) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      isTrustedBrowserMutation(request.headers, settings.trustedOrigin)
        ? Effect.void
        : Effect.fail(new Forbidden({ message: "The request's Origin is not trusted." }))))
)

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

const start = (ctx: Deps, provider: ProviderId) =>
  Effect.gen(function* () {
    const config = ctx.settings.providers[provider]
    if (config === undefined) return yield* notConfigured()
    const request = yield* authorizationRequest(provider, config, callbackUrl(ctx.settings.baseUrl, provider))
    const attemptId = newOpaqueId()
    const binding = newOpaqueId()
    yield* createAttempt({
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
    Effect.provideService(SqlClient.SqlClient, ctx.sql),
    Effect.withSpan("ExternalSignIn.start", { attributes: { provider } })
  )

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

/**
 * The provider's redirect back. Every outcome is a 302 to the console; only a complete,
 * matching, unexpired attempt in the browser that started it, a successful code exchange and
 * an enrolled, enabled account with that identity issue a session (and the result receipt).
 */
const callback = (ctx: Deps, provider: ProviderId, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const config = ctx.settings.providers[provider]
    if (config === undefined) return yield* Effect.fail(failed("provider not configured"))
    const parameters = new URL(request.url, ctx.settings.baseUrl).searchParams
    const state = parameters.get("state")
    if (state === null || state.length === 0 || state.length > 512) return yield* Effect.fail(failed("no state"))
    const attempt = yield* consumeAttempt({ provider, state, binding: readCookie(request, bindingCookie(ctx.auth)) })
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
    const account = yield* findAccountBySubject(provider, subject)
    if (Option.isNone(account)) return yield* Effect.fail(failed("no enrolled, enabled account has this identity"))
    const receipt = newOpaqueId()
    const { id: accountId, methodId, principalId } = account.value
    const session = yield* ctx.sql.withTransaction(
      Effect.tap(issueSession(accountId), (session) =>
        Effect.zipRight(
          completeAttempt({ id: attempt.value.id, sessionId: session.id, receipt }),
          recordAudit({
            kind: "authentication.external-sign-in",
            outcome: "success",
            actorPrincipalId: principalId,
            resource: { kind: "account", id: accountId },
            details: { provider, methodId, sessionId: session.id }
          })
        ))
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
    Effect.provideService(SqlClient.SqlClient, ctx.sql),
    Effect.withSpan("ExternalSignIn.callback", { attributes: { provider } })
  )

/**
 * Redeems the callback's one-use receipt for the key of the session the callback issued. The
 * caller must present that very session's cookie; nothing is issued or extended here.
 */
const result = (
  ctx: Deps,
  provider: ProviderId,
  request: HttpServerRequest.HttpServerRequest,
  attemptId: string
) =>
  Effect.gen(function* () {
    if (ctx.settings.providers[provider] === undefined) return yield* notConfigured()
    const receipt = readCookie(request, receiptCookie(ctx.auth))
    if (receipt === undefined) return yield* new Unauthenticated({ message: "The sign-in receipt is missing." })
    const token = readCookie(request, ctx.auth.cookieName)
    const session = token === undefined ? Option.none() : yield* resolveSession(token)
    if (Option.isNone(session) || session.value.credential._tag !== "Session") {
      return yield* new Unauthenticated({ message: "The session of this sign-in is missing, invalid or revoked." })
    }
    const sessionKey = yield* redeemReceipt({
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
    Effect.provideService(SqlClient.SqlClient, ctx.sql),
    Effect.withSpan("ExternalSignIn.result", { attributes: { provider } })
  )

export const ExternalSignInLive = HttpApiBuilder.group(SvcApi, "externalSignIn", (handlers) =>
  Effect.gen(function* () {
    const ctx: Deps = {
      auth: yield* AuthSettings,
      settings: yield* ExternalSignInSettings,
      sql: yield* SqlClient.SqlClient
    }
    return handlers
      .handle("codehostStart", () => start(ctx, "codehost"))
      .handle("codehostCallback", ({ request }) => callback(ctx, "codehost", request))
      .handle("codehostResult", ({ payload, request }) => result(ctx, "codehost", request, payload.attemptId))
      .handle("idproviderStart", () => start(ctx, "idprovider"))
      .handle("idproviderCallback", ({ request }) => callback(ctx, "idprovider", request))
      .handle("idproviderResult", ({ payload, request }) => result(ctx, "idprovider", request, payload.attemptId))
  })
).pipe(Layer.provide(BrowserOriginLive))
