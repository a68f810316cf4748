/** Without a Plugin Driver (SPEC 2.2, 7.3): no catalog, no pluginPolicies, selections are 501. */
import { describe, expect, it } from "@effect/vitest"
import { defaultInstallationConfig } from "@svc/core/config"
import { Effect } from "effect"
import { apiTestLayer, expectData, expectError, send } from "./support/iamServer.js"
import { setUpPlugins as setUp, WEB_SEARCH } from "./support/pluginsWorld.js"

describe("without a Plugin Driver", () => {
  it.layer(apiTestLayer(defaultInstallationConfig), { timeout: 120_000 })((it) => {
    it.effect("the catalog routes and any selection answer 501; no pluginPolicies", () =>
      Effect.gen(function* () {
        const { baseUrl, admin, call, configurationId } = yield* setUp("none")
        expectError(yield* call("POST", "agents/plugins", {}), 501, "NOT_IMPLEMENTED")
        expectError(yield* call("POST", "agents/plugins/details", { pluginId: WEB_SEARCH }), 501, "NOT_IMPLEMENTED")
        expectError(yield* call("POST", "agents", { name: "bot", configurationId, plugins: { [WEB_SEARCH]: { enabled: true } } }), 501, "NOT_IMPLEMENTED")
        expect(expectData(yield* call("POST", "agents", { name: "bot", configurationId, plugins: {} }), 201).plugins).toEqual({})
        const installation = expectData(yield* send(baseUrl, "GET", "/installation", admin.headers), 200)
        expect(installation.capabilities).not.toHaveProperty("pluginPolicies")
      }))
  })
})
