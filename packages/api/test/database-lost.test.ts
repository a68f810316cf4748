import { describe, expect, layer } from "@effect/vitest"
import { Migrations } from "@svc/core/db"
import { scratchDir, startEmbeddedPostgres, type RunningPostgres } from "@svc/core/embedded-postgres"
import { httpPipeline } from "@svc/core/http"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import { pgClientLayer } from "../../../testing/database.js"
import { call, REQUEST_ID, serveForTest, TestServer } from "../../../testing/server.js"
import { ThingsGroupsLive, ThingsTestApi } from "./support/thingsApi.js"

// This file stops and restarts a PostgreSQL server of its own, so it cannot share the run's.
const dir = scratchDir("svc-db-lost-")
let server: RunningPostgres

const database = Layer.unwrapEffect(
  Effect.promise(async () => {
    server = await startEmbeddedPostgres({ dir, ephemeral: false })
    return pgClientLayer(server.adminUrl)
  })
).pipe(Layer.tap((context) => Effect.provide(Migrations.run, context)))

const app = serveForTest(httpPipeline(ThingsTestApi, ThingsGroupsLive, { development: true, maxBodyBytes: 4096 })).pipe(
  Layer.provide(database)
)

const unavailable = {
  error: { code: "DEPENDENCY_UNAVAILABLE", message: expect.any(String) },
  meta: { requestId: expect.stringMatching(REQUEST_ID) }
}

describe("when the database is lost", () => {
  // Real time: the test waits for the pool to reconnect.
  layer(app, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("answers 503 DEPENDENCY_UNAVAILABLE, then recovers by itself when it returns", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expect((yield* Effect.promise(() => call(`${baseUrl}/readyz`))).status).toBe(200)
        const port = server.port
        yield* Effect.promise(() => server.stop())

        const ready = yield* Effect.promise(() => call(`${baseUrl}/readyz`))
        expect(ready.status).toBe(503)
        expect(ready.body).toEqual(unavailable)

        const write = yield* Effect.promise(() =>
          call(`${baseUrl}/things`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"x"}' })
        )
        expect(write.status).toBe(503)
        expect(write.body).toEqual(unavailable)
        expect(write.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i)

        const liveness = yield* Effect.promise(() => call(`${baseUrl}/healthz`))
        expect(liveness.status).toBe(200)

        server = yield* Effect.promise(() => startEmbeddedPostgres({ dir, port, ephemeral: false }))
        let status = 0
        for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
          status = (yield* Effect.promise(() => call(`${baseUrl}/readyz`))).status
          if (status !== 200) yield* Effect.sleep("200 millis")
        }
        expect(status).toBe(200)
        const after = yield* Effect.promise(() =>
          call(`${baseUrl}/things`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"y"}' })
        )
        expect(after.status).toBe(201)
      }).pipe(
        Effect.ensuring(
          Effect.promise(async () => {
            await server.stop()
            fs.rmSync(dir, { recursive: true, force: true })
          })
        )
      ))
  })
})
