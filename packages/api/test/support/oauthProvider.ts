/**
 * A real OAuth 2 / OpenID Connect server on loopback for external sign-in tests: the
 * `oauth2-mock-server` package. Its authorization endpoint redirects at once with a code; its
 * token endpoint checks PKCE and signs real JWTs. Each test says which external subject the
 * next sign-in resolves to (`as`): the ID token's `sub` (idprovider) and the user API's
 * numeric `id` (codehost).
 */
import type { OAuthProvider } from "@svc/core/config"
import { Context, Effect, Layer, Redacted } from "effect"
import { OAuth2Server } from "oauth2-mock-server"

export interface MockProvider {
  readonly server: OAuth2Server
  readonly issuer: string
  /** The subject the next token and user API answers carry. */
  readonly as: (subject: string) => void
  readonly config: (overrides?: Partial<OAuthProvider>) => OAuthProvider
}

export class MockOAuthProvider extends Context.Tag("test/MockOAuthProvider")<MockOAuthProvider, MockProvider>() {
  static readonly layer = Layer.scoped(
    MockOAuthProvider,
    Effect.acquireRelease(
      Effect.promise(async () => {
        const server = new OAuth2Server()
        await server.issuer.keys.generate("RS256")
        await server.start(0, "127.0.0.1")
        const issuer = `http://127.0.0.1:${server.address().port}`
        server.issuer.url = issuer
        const current = { subject: "johndoe" }
        server.service.on("beforeTokenSigning", (token) => {
          token.payload.sub = current.subject
        })
        server.service.on("beforeUserinfo", (response) => {
          response.body = /^[0-9]+$/.test(current.subject)
            ? { id: Number(current.subject), login: `user${current.subject}` }
            : { sub: current.subject }
        })
        const provider: MockProvider = {
          server,
          issuer,
          as: (subject) => {
            current.subject = subject
          },
          config: (overrides = {}) => ({
            issuer,
            authorizationUrl: `${issuer}/authorize`,
            tokenUrl: `${issuer}/token`,
            userInfoUrl: `${issuer}/userinfo`,
            // oauth4webapi form-encodes Basic credentials (RFC 6749 2.3.1) and the mock does not
            // decode them: an id without special characters keeps its ID token audience exact.
            clientId: "svctest",
            clientSecret: Redacted.make("mock-client-secret"),
            ...overrides
          })
        }
        return provider
      }),
      ({ server }) => Effect.promise(() => server.stop())
    )
  )
}
