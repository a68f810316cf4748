import { describe, expect, it } from "@effect/vitest"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { Effect, Layer } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { call, REQUEST_ID, serveForTest, TestServer } from "../../../testing/server.js"
import { testSecretDriver, unavailableCompute } from "../../../testing/drivers.js"

// Every group of the API (the skeleton's paths are checked among them).
const groups = ApiGroupsLive.pipe(
  Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
  Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl: "http://127.0.0.1:8080", production: false }))),
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig))
)

const app = (development: boolean) =>
  serveForTest(httpPipeline(SvcApi, groups, { development, maxBodyBytes: 448 * 1024 })).pipe(
    Layer.provide(migratedDatabaseLayer)
  )

const expectError = (
  result: Awaited<ReturnType<typeof call>>,
  status: number,
  code: string
) => {
  expect(result.status).toBe(status)
  expect(result.headers.get("content-type")).toMatch(/^application\/json/)
  expect(Object.keys(result.body).sort()).toEqual(["error", "meta"])
  expect(result.body.error.code).toBe(code)
  expect(typeof result.body.error.message).toBe("string")
  expect(result.body.error.message.length).toBeGreaterThan(0)
  expect(result.body.error.message.length).toBeLessThanOrEqual(256)
  expect(result.body.meta.requestId).toMatch(REQUEST_ID)
  expect(result.headers.get("x-request-id")).toBe(result.body.meta.requestId)
}

describe("the HTTP skeleton (development)", () => {
  it.layer(app(true), { timeout: 60_000 })((it) => {
    it.effect("GET /healthz answers in the success envelope with a request id", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const result = yield* Effect.promise(() => call(`${baseUrl}/healthz`))
        expect(result.status).toBe(200)
        expect(result.body).toEqual({ data: { status: "ok" }, meta: { requestId: expect.stringMatching(REQUEST_ID) } })
        expect(result.headers.get("x-request-id")).toBe(result.body.meta.requestId)
      }))

    it.effect("GET /readyz reports the database reachable and migrations current", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const result = yield* Effect.promise(() => call(`${baseUrl}/readyz`))
        expect(result.status).toBe(200)
        expect(result.body.data).toEqual({ status: "ready", database: "ok", migrations: "current" })
      }))

    it.effect("every request gets its own id", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ids = yield* Effect.promise(() =>
          Promise.all(Array.from({ length: 5 }, () => call(`${baseUrl}/healthz`).then((r) => r.body.meta.requestId)))
        )
        expect(new Set(ids).size).toBe(5)
      }))

    it.effect("an unknown route is 404 NOT_FOUND in the error envelope", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectError(yield* Effect.promise(() => call(`${baseUrl}/no/such/route`)), 404, "NOT_FOUND")
        expectError(yield* Effect.promise(() => call(`${baseUrl}/`)), 404, "NOT_FOUND")
        expectError(yield* Effect.promise(() => call(`${baseUrl}/healthz/extra`, { method: "POST" })), 404, "NOT_FOUND")
      }))

    it.effect("a known path with another method is 405 METHOD_NOT_ALLOWED with Allow", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
          const result = yield* Effect.promise(() => call(`${baseUrl}/healthz`, { method }))
          expectError(result, 405, "METHOD_NOT_ALLOWED")
          expect(result.headers.get("allow")).toBe("GET")
        }
        const openapi = yield* Effect.promise(() => call(`${baseUrl}/openapi.json`, { method: "DELETE" }))
        expectError(openapi, 405, "METHOD_NOT_ALLOWED")
        expect(openapi.headers.get("allow")).toBe("GET")
      }))

    it.effect("serves the OpenAPI 3.1.0 document in development", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const result = yield* Effect.promise(() => call(`${baseUrl}/openapi.json`))
        expect(result.status).toBe(200)
        expect(result.body.openapi).toBe("3.1.0")
        expect(result.body.info.version).toBe("0.1.0")
        expect(result.body.info.title).toMatch(/development/i)
        expect(Object.keys(result.body.paths)).toEqual(expect.arrayContaining(["/healthz", "/readyz"]))
      }))
  })
})
