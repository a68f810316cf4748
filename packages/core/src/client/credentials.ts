/**
 * How the typed client proves who it is (SPEC 5.1-5.3). Browser-safe: only `@effect/platform`
 * and `effect`.
 */
import { Cookies, FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Redacted, Ref } from "effect"

export type Credentials =
  /** No credential: public endpoints, or a sign-in that the caller performs itself. */
  | { readonly _tag: "None" }
  /** A service API key, sent as `x-api-key` (SPEC 5.5); it needs no `Origin`. */
  | { readonly _tag: "ServiceKey"; readonly key: Redacted.Redacted<string> }
  /**
   * Outside a browser (Node, a CLI): keep the session cookie that sign-in sets with `Set-Cookie`
   * and send it back, with the `Origin` cookie-authenticated mutations need (SPEC 5.3). No
   * cookie jar exists there, and nothing else would send an `Origin`.
   */
  | {
    readonly _tag: "CookieJar"
    readonly origin: string | undefined
    /** A jar the caller keeps (a CLI saving the session between runs); a fresh one otherwise. */
    readonly jar?: Ref.Ref<Cookies.Cookies> | undefined
  }
  /**
   * In a browser: its own cookie jar keeps the session and it sends `Origin` itself (a script
   * may not set either header), so the client only says whether fetch carries cookies.
   */
  | { readonly _tag: "Browser"; readonly credentials: "same-origin" | "include" }

export const Credentials = {
  none: { _tag: "None" } as Credentials,
  serviceKey: (key: string | Redacted.Redacted<string>): Credentials => ({
    _tag: "ServiceKey",
    key: Redacted.isRedacted(key) ? key : Redacted.make(key)
  }),
  /** `origin` defaults to the base URL's origin, which is what the service trusts when it serves there. */
  cookieJar: (options: { readonly origin?: string; readonly jar?: Ref.Ref<Cookies.Cookies> } = {}): Credentials => ({
    _tag: "CookieJar",
    origin: options.origin,
    jar: options.jar
  }),
  browser: (options: { readonly credentials?: "same-origin" | "include" } = {}): Credentials => ({
    _tag: "Browser",
    credentials: options.credentials ?? "same-origin"
  })
} as const

type Transform = (client: HttpClient.HttpClient) => HttpClient.HttpClient

/**
 * The transformation of the transport for one set of credentials. An Effect because a cookie
 * jar is state: each client made gets its own, so two clients never share a session.
 */
export const transportFor = (credentials: Credentials, baseUrl: string | URL): Effect.Effect<Transform> => {
  switch (credentials._tag) {
    case "None":
      return Effect.succeed((client) => client)
    case "ServiceKey":
      return Effect.succeed(HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", Redacted.value(credentials.key))))
    case "CookieJar": {
      const origin = credentials.origin ?? new URL(baseUrl).origin
      const jar = credentials.jar === undefined ? Ref.make(Cookies.empty) : Effect.succeed(credentials.jar)
      return Effect.map(jar, (jar) => (client: HttpClient.HttpClient) =>
        client.pipe(
          HttpClient.withCookiesRef(jar),
          HttpClient.mapRequest(HttpClientRequest.setHeader("origin", origin))
        ))
    }
    case "Browser": {
      // Read by FetchHttpClient from the context of the request's fiber.
      const init = { credentials: credentials.credentials }
      return Effect.succeed(HttpClient.transform((response) => Effect.provideService(response, FetchHttpClient.RequestInit, init)))
    }
  }
}
