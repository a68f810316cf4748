/**
 * SPEC 4.2: `POST /installation/bootstrap` is "not in production serving paths". A production
 * server answers it like a path that does not exist (404, before authentication), whoever asks.
 * Its own file: one test server per file (the HTTP server layer is shared within a file).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { anonymous, apiTestLayer, expectError, seedAdmin, seedServiceKey, send } from "./support/iamServer.js"

describe("POST /installation/bootstrap on a production server", () => {
  it.layer(apiTestLayer(undefined, { development: false }), { timeout: 120_000 })((it) => {
    it.effect("is a path that does not exist, whoever asks and however it is spelled", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("bootstrap-prod@example.com")
        const key = yield* seedServiceKey("bootstrap-prod-key")
        for (const headers of [admin.headers, key.headers, anonymous]) {
          for (const path of ["/installation/bootstrap", "/installation/bootstrap/", "/Installation/Bootstrap", "/installation/%62ootstrap"]) {
            expectError(yield* send(baseUrl, "POST", path, headers), 404, "NOT_FOUND")
          }
        }
        // The rest of the Installation group is served as usual.
        expect((yield* send(baseUrl, "GET", "/installation", admin.headers)).status).toBe(200)
      }))
  })
})
