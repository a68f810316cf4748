/**
 * External sign-in with production cookies (SPEC 5.2): the binding, receipt and session cookies
 * are Secure and `__Secure-` prefixed, and the flow works with them end to end.
 */
import { describe, expect, it } from "@effect/vitest"
import { ApiGroupsLive, AuthSettings, ExternalSignInSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { Effect, Layer } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { serveForTest, TestServer } from "../../../testing/server.js"
import { enrolled, sessionsOf } from "./support/externalSignInServer.js"
import { MockOAuthProvider } from "./support/oauthProvider.js"
import { authorize, callback, CookieJar, result, start } from "./support/signInFlow.js"
import { testSecretDriver, unavailableCompute } from "../../../testing/drivers.js"

const BASE_URL = "https://svc.example.com"
const origin = { origin: BASE_URL }

const app = Layer.unwrapEffect(
  Effect.map(MockOAuthProvider, (provider) => {
    const providers = { idprovider: provider.config() }
    return serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development: false, maxBodyBytes: 448 * 1024 })).pipe(
      Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
      Layer.provide(Layer.succeed(ExternalSignInSettings, ExternalSignInSettings.make({ baseUrl: BASE_URL, providers }))),
      Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl: BASE_URL, production: true }))),
      Layer.provide(Layer.succeed(InstallationConfiguration, { ...defaultInstallationConfig, providers }))
    )
  })
).pipe(Layer.provideMerge(MockOAuthProvider.layer), Layer.provideMerge(migratedDatabaseLayer))

describe("external sign-in in production", () => {
  it.layer(app, { timeout: 60_000 })((it) => {
    it.effect("every cookie is Secure and __Secure- prefixed", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        const account = yield* enrolled("production@example.com", "idprovider", "production-subject")
        mock.as("production-subject")
        const jar = new CookieJar()
        const started = yield* start(baseUrl, "idprovider", jar, origin)
        expect(started.status).toBe(200)
        expect(new URL(started.body.data.url).searchParams.get("redirect_uri"))
          .toBe(`${BASE_URL}/api/auth/providers/idprovider/callback`)
        expect(started.headers.getSetCookie()).toEqual([
          expect.stringMatching(
            /^__Secure-svc\.signin_attempt=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/api\/auth\/providers\/idprovider; HttpOnly; Secure; SameSite=Lax$/
          )
        ])
        const redirect = yield* authorize(started.body.data.url)
        const completed = yield* callback(baseUrl, "idprovider", redirect.search, jar)
        expect(completed.status).toBe(302)
        expect(completed.location).toBe(`${BASE_URL}/console/`)
        expect(completed.headers.getSetCookie()).toEqual([
          "__Secure-svc.signin_attempt=; Max-Age=0; Path=/api/auth/providers/idprovider; HttpOnly; Secure; SameSite=Lax",
          expect.stringMatching(/^__Secure-svc\.session_token=svcs_[A-Za-z0-9_-]{43}; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/),
          expect.stringMatching(
            /^__Secure-svc\.signin_receipt=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/api\/auth\/providers\/idprovider; HttpOnly; Secure; SameSite=Lax$/
          )
        ])
        const redeemed = yield* result(baseUrl, "idprovider", started.body.data.attemptId, jar, origin)
        expect(redeemed.status).toBe(200)
        expect(redeemed.body.data).toEqual({ sessionKey: (yield* sessionsOf(account.userId))[0]!.session_key })
      }))
  })
})
