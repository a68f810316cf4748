/**
 * The two short-lived cookies of external sign-in, both HttpOnly, SameSite=Lax, Secure in
 * production, and sent only to that provider's routes (`Path=/api/auth/providers/<provider>`):
 *
 * - the *binding* cookie, set by `start`: the callback completes only in the browser that
 *   started the attempt (login CSRF: nobody can make a victim's browser finish their flow);
 * - the *receipt* cookie, set by the callback: the one-use proof `result` redeems for the
 *   session's key.
 *
 * Values are 43 random base64url characters; only their SHA-256 digests are stored.
 */
import { HttpApp, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { AuthSettingsShape } from "../auth/settings.js"
import { ATTEMPT_TTL, RECEIPT_TTL } from "./attempts.js"
import type { ProviderId } from "./settings.js"

type Kind = "signin_attempt" | "signin_receipt"

const nameOf = (settings: AuthSettingsShape, kind: Kind): string =>
  settings.secureCookies ? `__Secure-svc.${kind}` : `svc.${kind}`

const optionsOf = (settings: AuthSettingsShape, provider: ProviderId) => ({
  httpOnly: true,
  sameSite: "lax" as const,
  path: `/api/auth/providers/${provider}`,
  secure: settings.secureCookies
})

export const bindingCookie = (settings: AuthSettingsShape) => nameOf(settings, "signin_attempt")
export const receiptCookie = (settings: AuthSettingsShape) => nameOf(settings, "signin_receipt")

export const readCookie = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => {
  const value = request.cookies[name]
  return value === undefined || value.length === 0 ? undefined : value
}

const ttlOf = (kind: Kind) => (kind === "signin_attempt" ? ATTEMPT_TTL : RECEIPT_TTL)

export const withCookie = (
  response: HttpServerResponse.HttpServerResponse,
  settings: AuthSettingsShape,
  provider: ProviderId,
  kind: Kind,
  value: string
) =>
  HttpServerResponse.unsafeSetCookie(response, nameOf(settings, kind), value, {
    ...optionsOf(settings, provider),
    maxAge: ttlOf(kind)
  })

export const withoutCookie = (
  response: HttpServerResponse.HttpServerResponse,
  settings: AuthSettingsShape,
  provider: ProviderId,
  kind: Kind
) => HttpServerResponse.unsafeSetCookie(response, nameOf(settings, kind), "", { ...optionsOf(settings, provider), maxAge: 0 })

/** Adds a cookie change to the response a handler's value is encoded into. */
export const onResponse = (
  f: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
): Effect.Effect<void> => HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(f(response)))
