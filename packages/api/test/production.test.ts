import { describe, expect, it } from "@effect/vitest"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { Effect, Layer } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { call, REQUEST_ID, serveForTest, TestServer } from "../../../testing/server.js"
import { testSecretDriver, unavailableCompute } from "../../../testing/drivers.js"

// A file of its own: HttpApi's router layer is memoized per test file.
// Every group of the API (the skeleton's paths are checked among them).
const groups = ApiGroupsLive.pipe(
  Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
  Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl: "http://127.0.0.1:8080", production: false }))),
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig))
)

const app = serveForTest(httpPipeline(SvcApi, groups, { development: false, maxBodyBytes: 448 * 1024 })).pipe(
  Layer.provide(migratedDatabaseLayer)
)

describe("the HTTP skeleton (production)", () => {
  it.layer(app, { timeout: 60_000 })((it) => {
    it.effect("does not serve the OpenAPI document", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const result = yield* Effect.promise(() => call(`${baseUrl}/openapi.json`))
        expect(result.status).toBe(404)
        expect(result.body).toEqual({
          error: { code: "NOT_FOUND", message: "No resource exists at this path." },
          meta: { requestId: expect.stringMatching(REQUEST_ID) }
        })
      }))
  })
})
