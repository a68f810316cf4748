/** What the plugin tests share: a Namespace with an empty agent Configuration and its admin. */
import { defaultInstallationConfig, type InstallationConfig } from "@svc/core/config"
import { Effect } from "effect"
import { TestServer } from "../../../../testing/server.js"
import { expectData, type Result, seedAdmin, seedNamespace, send } from "./iamServer.js"

export type { Result }

export const WEB_SEARCH = "bundled:openclaw-web-search"

/** The `details` of an error answer. */
export const errorDetails = (result: Result): unknown => (result.body as { error?: { details?: unknown } }).error?.details

export const setUpPlugins = (label: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`plugins-${label}@example.com`)
    const ns = yield* seedNamespace(`plugins-${label}`)
    const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
    const call = (method: string, path: string, body?: unknown, headers = admin.headers) =>
      send(baseUrl, method, `/namespaces/${ns}/${path}`, headers, body)
    return { baseUrl, admin, ns, configurationId: configuration.id as string, call }
  })

/** The default Installation with the `bundled` Plugin Driver selected. */
export const withBundledPlugins: InstallationConfig = {
  ...defaultInstallationConfig,
  drivers: { ...defaultInstallationConfig.drivers, plugin: { id: "bundled" } }
}
