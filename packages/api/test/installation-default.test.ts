import { describe, expect, it } from "@effect/vitest"
import { confinementCheck, detectConfinement } from "@svc/core/drivers/compute"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, seedAdmin, send } from "./support/iamServer.js"

describe("GET /backends with no Backends configured", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("is an empty list", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("inst-empty@example.com")
        expect(expectData(yield* send(baseUrl, "GET", "/backends", admin.headers), 200)).toEqual([])
        // `local` Compute: the diagnostics say how this host confines Agent gateways.
        const confinement = yield* Effect.promise(() => detectConfinement())
        expect(expectData(yield* send(baseUrl, "GET", "/installation", admin.headers), 200)).toEqual({
          capabilities: { agentProvisioning: { executionModes: ["embedded"] } },
          diagnostics: [confinementCheck(confinement)]
        })
      }))
  })
})
