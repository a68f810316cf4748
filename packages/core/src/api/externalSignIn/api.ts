import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import { Envelope, PatternString, RequestBody } from "../../schema/index.js"
import { Schema } from "effect"
import { BrowserOrigin } from "../middleware.js"

/** The two external sign-in providers (SPEC 5.1). */
export const PROVIDERS = ["codehost", "idprovider"] as const
export type ProviderId = (typeof PROVIDERS)[number]

/** SPEC 4.1: 43 characters of `[A-Za-z0-9_-]`. */
export const AttemptId = PatternString(/^[A-Za-z0-9_-]{43}$/, 43).annotations({
  description: "The sign-in attempt: 43 characters of A-Z a-z 0-9 _ -"
})

export const ExternalSignInStarted = Schema.Struct({
  attemptId: AttemptId,
  url: Schema.String.annotations({ description: "The provider's authorization URL", jsonSchema: { type: "string", format: "uri" } })
}).annotations({ identifier: "ExternalSignInStarted" })

export const ExternalSignInResultRequest = RequestBody({ attemptId: AttemptId }).annotations({ identifier: "ExternalSignInResultRequest" })

export const ExternalSignInResult = Schema.Struct({
  sessionKey: Schema.String.annotations({ description: "The non-credential key of the session the callback issued" })
}).annotations({ identifier: "ExternalSignInResult" })

const Redirect = HttpApiSchema.Empty(302).annotations({
  description: "Redirect to the console: `/console/` on success, `/console/?error=sign_in_failed` otherwise"
})

const endpoints = <P extends ProviderId>(provider: P) => {
  const base = `/api/auth/providers/${provider}` as const
  return {
    start: HttpApiEndpoint.post(`${provider}Start`, `${base}/start`)
      .addSuccess(Envelope(ExternalSignInStarted, "ExternalSignInStartedResponse"))
      .addError(ErrorWire.NOT_FOUND)
      .middleware(BrowserOrigin)
      .annotate(OpenApi.Summary, `Start a ${provider} sign-in`),
    callback: HttpApiEndpoint.get(`${provider}Callback`, `${base}/callback`)
      .addSuccess(Redirect)
      .annotate(OpenApi.Summary, `The ${provider}'s redirect back: completes the sign-in`),
    result: HttpApiEndpoint.post(`${provider}Result`, `${base}/result`)
      .setPayload(ExternalSignInResultRequest)
      .addSuccess(Envelope(ExternalSignInResult, "ExternalSignInResultResponse"))
      .addError(ErrorWire.NOT_FOUND)
      .addError(ErrorWire.UNAUTHENTICATED)
      .middleware(JsonBody)
      .middleware(BrowserOrigin)
      .annotate(OpenApi.Summary, `Redeem the one-use receipt of a ${provider} sign-in for its sessionKey`)
  }
}

const codehost = endpoints("codehost")
const idprovider = endpoints("idprovider")

/** External sign-in (SPEC 4.1 `/providers/{codehost|idprovider}/start|callback|result`). */
export const ExternalSignInApi = HttpApiGroup.make("externalSignIn")
  .add(codehost.start)
  .add(codehost.callback)
  .add(codehost.result)
  .add(idprovider.start)
  .add(idprovider.callback)
  .add(idprovider.result)
  .annotate(OpenApi.Title, "External sign-in")
  .annotate(
    OpenApi.Description,
    "Sign-in with an administrator-enrolled codehost or idprovider identity (OAuth 2 authorization code with PKCE)"
  )
