/**
 * The OAuth 2 / OpenID Connect client side of external sign-in, through `oauth4webapi`:
 * authorization URLs with PKCE S256 (and a nonce for OIDC), and the authorization-code
 * exchange that yields the external subject. Failures are `ProviderExchangeFailed` with a
 * reason for the log; nothing of them reaches a response.
 */
import type { OAuthProvider } from "@svc/core/config"
import { Data, Effect, Redacted } from "effect"
import * as oauth from "oauth4webapi"
import type { ProviderId } from "./settings.js"
import { withExportedSpan } from "@svc/core/observability"

export class ProviderExchangeFailed extends Data.TaggedError("ProviderExchangeFailed")<{
  readonly reason: string
  readonly cause?: unknown
}> {}

/** What `start` keeps server-side and what goes into the authorization URL. */
export interface AuthorizationRequest {
  readonly state: string
  readonly codeVerifier: string
  readonly nonce: string | null
  readonly url: string
}

/** SPEC 4.1: a codehost subject is a numeric string of 1-20 digits without a leading zero. */
export const CODEHOST_SUBJECT = /^[1-9][0-9]{0,19}$/
/** SPEC 4.1: an idprovider subject is 1-255 printable non-space ASCII characters. */
export const IDPROVIDER_SUBJECT = /^[\x21-\x7e]{1,255}$/

const isOidc = (provider: ProviderId): boolean => provider === "idprovider"

const scopesOf = (provider: ProviderId, config: OAuthProvider): ReadonlyArray<string> => {
  const configured = config.scopes ?? []
  return isOidc(provider) ? ["openid", ...configured.filter((s) => s !== "openid")] : configured
}

const authorizationServer = (config: OAuthProvider): oauth.AuthorizationServer => ({
  issuer: config.issuer,
  authorization_endpoint: config.authorizationUrl,
  token_endpoint: config.tokenUrl,
  ...(config.userInfoUrl !== undefined ? { userinfo_endpoint: config.userInfoUrl } : {})
})

const clientAuthentication = (config: OAuthProvider): oauth.ClientAuth => {
  const secret = Redacted.value(config.clientSecret)
  return config.tokenEndpointAuthMethod === "client_secret_post"
    ? oauth.ClientSecretPost(secret)
    : oauth.ClientSecretBasic(secret)
}

/**
 * The configuration schema allows `http:` only for a loopback host (local development and
 * tests); oauth4webapi must then be told so explicitly.
 */
const requestOptions = (url: string) => ({
  [oauth.allowInsecureRequests]: new URL(url).protocol === "http:",
  signal: AbortSignal.timeout(10_000)
})

export const callbackUrl = (baseUrl: string, provider: ProviderId): string =>
  `${baseUrl}/api/auth/providers/${provider}/callback`

/** A fresh state, PKCE verifier (S256) and, for OIDC, nonce, with the URL that carries them. */
export const authorizationRequest = (
  provider: ProviderId,
  config: OAuthProvider,
  redirectUri: string
): Effect.Effect<AuthorizationRequest> =>
  Effect.promise(async () => {
    const state = oauth.generateRandomState()
    const codeVerifier = oauth.generateRandomCodeVerifier()
    const nonce = isOidc(provider) ? oauth.generateRandomNonce() : null
    const url = new URL(config.authorizationUrl)
    url.searchParams.set("response_type", "code")
    url.searchParams.set("client_id", config.clientId)
    url.searchParams.set("redirect_uri", redirectUri)
    const scopes = scopesOf(provider, config)
    if (scopes.length > 0) url.searchParams.set("scope", scopes.join(" "))
    url.searchParams.set("state", state)
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier))
    url.searchParams.set("code_challenge_method", "S256")
    if (nonce !== null) url.searchParams.set("nonce", nonce)
    return { state, codeVerifier, nonce, url: url.href }
  })

const attempt = <A>(reason: string, f: () => Promise<A>): Effect.Effect<A, ProviderExchangeFailed> =>
  Effect.tryPromise({ try: f, catch: (cause) => new ProviderExchangeFailed({ reason, cause }) })

/** The numeric user id of a code host's user API answer (`{"id": 123, ...}`). */
const codehostSubject = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const id = (body as { id?: unknown }).id
  const text = typeof id === "number" && Number.isSafeInteger(id) ? String(id) : typeof id === "string" ? id : undefined
  return text !== undefined && CODEHOST_SUBJECT.test(text) ? text : undefined
}

/**
 * Completes the authorization-code grant with PKCE and returns the external subject:
 * `codehost` the numeric user id from its user API, `idprovider` the validated ID token's `sub`
 * (issuer, audience, expiry and nonce checked by oauth4webapi; the token comes straight from
 * the token endpoint over TLS, OIDC Core 3.1.3.7).
 */
export const exchangeCode = (options: {
  readonly provider: ProviderId
  readonly config: OAuthProvider
  readonly redirectUri: string
  readonly callbackParameters: URLSearchParams
  readonly expectedState: string
  readonly codeVerifier: string
  readonly nonce: string | null
}): Effect.Effect<string, ProviderExchangeFailed> =>
  Effect.gen(function* () {
    const { config, provider } = options
    const as = authorizationServer(config)
    const client: oauth.Client = { client_id: config.clientId }
    const parameters = yield* Effect.try({
      try: () => oauth.validateAuthResponse(as, client, options.callbackParameters, options.expectedState),
      catch: (cause) => new ProviderExchangeFailed({ reason: "authorization response rejected", cause })
    })
    const response = yield* attempt("token request failed", () =>
      oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuthentication(config),
        parameters,
        options.redirectUri,
        options.codeVerifier,
        requestOptions(config.tokenUrl)
      ))
    const tokens = yield* attempt("token response rejected", () =>
      oauth.processAuthorizationCodeResponse(as, client, response, {
        ...(isOidc(provider) && options.nonce !== null
          ? { expectedNonce: options.nonce, requireIdToken: true }
          : {})
      }))
    if (isOidc(provider)) {
      const sub = oauth.getValidatedIdTokenClaims(tokens)?.sub
      if (sub === undefined || !IDPROVIDER_SUBJECT.test(sub)) {
        return yield* new ProviderExchangeFailed({ reason: "ID token subject missing or malformed" })
      }
      return sub
    }
    const userInfoUrl = config.userInfoUrl
    if (userInfoUrl === undefined) return yield* new ProviderExchangeFailed({ reason: "no userInfoUrl configured" })
    const userResponse = yield* attempt("user API request failed", () =>
      oauth.protectedResourceRequest(
        tokens.access_token,
        "GET",
        new URL(userInfoUrl),
        new Headers({ accept: "application/json" }),
        null,
        requestOptions(userInfoUrl)
      ))
    if (userResponse.status !== 200) {
      return yield* new ProviderExchangeFailed({ reason: `user API answered ${userResponse.status}` })
    }
    const body = yield* attempt("user API answer is not JSON", () => userResponse.json() as Promise<unknown>)
    const subject = codehostSubject(body)
    if (subject === undefined) return yield* new ProviderExchangeFailed({ reason: "user API answer has no numeric id" })
    return subject
  }).pipe(withExportedSpan("ExternalSignIn.exchangeCode", { attributes: { provider: options.provider } }))
