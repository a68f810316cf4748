/**
 * External sign-in on a server whose Installation configures no provider (SPEC 4.1): a file of
 * its own, since one file serves one API (the HttpApi router is shared within a file).
 */
import { describe, expect, it } from "@effect/vitest"
import { ApiGroupsLive, AuthSettings, ExternalSignInSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { Effect, Layer } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { serveForTest, TestServer } from "../../../testing/server.js"
import { auth, expectError, expectFailedCallback } from "./support/externalSignInServer.js"
import { callback, CookieJar, ORIGIN, type Provider, result, start } from "./support/signInFlow.js"
import { testSecretDriver, unavailableCompute } from "../../../testing/drivers.js"

describe("external sign-in without configured providers", () => {
  const unconfigured = serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 })).pipe(
    Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
    Layer.provide(Layer.succeed(ExternalSignInSettings, ExternalSignInSettings.make({ baseUrl: ORIGIN, providers: {} }))),
    Layer.provide(Layer.succeed(AuthSettings, auth)),
    Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
    Layer.provideMerge(migratedDatabaseLayer)
  )

  it.layer(unconfigured, { timeout: 60_000 })((it) => {
    it.effect("start and result answer 404; the callback sends the browser back with the generic failure", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        for (const provider of ["codehost", "idprovider"] as const) {
          const jar = new CookieJar()
          expectError(yield* start(baseUrl, provider, jar), 404, "NOT_FOUND")
          expect(jar.received).toEqual([])
          // The Origin check comes first.
          expectError(yield* start(baseUrl, provider, jar, { origin: "http://evil.example" }), 403, "FORBIDDEN")
          expectError(yield* result(baseUrl, provider, "a".repeat(43), jar), 404, "NOT_FOUND")
          expectFailedCallback(yield* callback(baseUrl, provider, "?code=abc&state=def", jar))
        }
        // Another provider name is no route at all.
        const unknown = yield* start(baseUrl, "gitlab" as Provider, new CookieJar())
        expectError(unknown, 404, "NOT_FOUND")
      }))
  })
})
