/**
 * A revision's plugins at deployment (DESIGN §15): its frozen selection planned against the
 * catalog and the deployed Configuration, each enabled plugin installed on this host (checked
 * against its pinned integrity, cached per host under `<dataDir>/plugins`), and what could not
 * be done reported as deployment warnings, never as a failure: `PLUGIN_AUTH_REQUIRED` for a
 * plugin the Configuration gives no credential, `PLUGIN_INSTALL_FAILED` for one that could not be
 * fetched or checked. The gateway starts with the plugins that could be installed.
 */
import { Plugins } from "@svc/core/api"
import { InstallationConfiguration, ProcessConfiguration } from "@svc/core/config"
import type { GatewayPlugin } from "@svc/core/drivers/compute"
import { ensureInstalled, type PluginWarning, planPlugins } from "@svc/core/drivers/plugin"
import type { GatewaySnapshot } from "@svc/core/db"
import { Effect, Either, Option, Schema } from "effect"
import * as os from "node:os"
import * as path from "node:path"

const decodePlugins = Schema.decodeUnknownEither(Plugins)

export interface PreparedPlugins {
  readonly plugins: ReadonlyArray<GatewayPlugin>
  readonly warnings: ReadonlyArray<PluginWarning>
}

const none: PreparedPlugins = { plugins: [], warnings: [] }

export const preparePlugins = (snapshot: GatewaySnapshot) =>
  Effect.gen(function* () {
    const frozen = snapshot.plugins
    if (frozen === undefined || frozen.driver.id === "none") return none
    const decoded = decodePlugins(frozen.plugins ?? {})
    if (Either.isLeft(decoded)) {
      yield* Effect.logWarning("a revision's plugin selection no longer decodes; no plugin is loaded")
      return none
    }
    const { planned, warnings } = planPlugins(decoded.right, {
      values: snapshot.configuration,
      secretVariables: Object.keys(snapshot.secretBindings)
    })
    const installation = yield* Effect.serviceOption(InstallationConfiguration)
    const driver = Option.getOrUndefined(installation)?.drivers.plugin
    const processConfig = yield* Effect.serviceOption(ProcessConfiguration)
    const cacheRoot = path.join(Option.match(processConfig, { onNone: () => os.tmpdir(), onSome: (c) => c.dataDir }), "plugins")
    const plugins: Array<GatewayPlugin> = []
    const failed: Array<PluginWarning> = []
    for (const plugin of planned) {
      const installed = yield* Effect.tryPromise(() =>
        driver === undefined
          ? Promise.reject(new Error("no Plugin Driver is selected any more"))
          : ensureInstalled(plugin.entry, { registry: driver.registry, cacheRoot })
      ).pipe(
        Effect.tapError((error) => Effect.logWarning("a plugin could not be installed", { pluginId: plugin.entry.id, cause: String(error.error) })),
        Effect.option
      )
      if (Option.isNone(installed)) {
        failed.push({ code: "PLUGIN_INSTALL_FAILED", pluginId: plugin.entry.id })
        continue
      }
      plugins.push({ pluginId: plugin.entry.pluginId, directory: installed.value, deniedTools: plugin.deniedTools, hooks: plugin.hooks })
    }
    return { plugins, warnings: [...failed, ...warnings].sort((a, b) => (a.pluginId < b.pluginId ? -1 : a.pluginId > b.pluginId ? 1 : 0)) }
  })
