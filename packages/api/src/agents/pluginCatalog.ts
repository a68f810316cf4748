/**
 * The plugin catalog routes (SPEC 4.4, DESIGN §15): the selected Plugin Driver's curated
 * catalog, to anyone who may create Agents in the Namespace. Without a Plugin Driver there is no
 * catalog: 501, as for a plugin selection (SPEC 7.3).
 */
import type { ListPlugins, PluginDetailsRequest } from "@svc/core/api"
import { InstallationConfiguration } from "@svc/core/config"
import { catalogEntry, listCatalog, pluginView } from "@svc/core/drivers/plugin"
import { NotFound, NotImplemented } from "@svc/core/errors"
import type { NamespaceId } from "@svc/core/schema"
import { Effect } from "effect"
import { Authorization } from "../auth/authorize.js"
import { namespaceRef } from "../iam/access.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { exportedFn } from "@svc/core/observability"

export class PluginCatalog extends Effect.Service<PluginCatalog>()("@svc/api/PluginCatalog", {
  effect: Effect.gen(function* () {
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const installation = yield* InstallationConfiguration

    const admit = (namespaceId: NamespaceId) =>
      Effect.gen(function* () {
        yield* authorize("agent:create", namespaceRef(namespaceId))
        yield* namespaces.requireLive(namespaceId)
        if (installation.drivers.plugin === undefined) {
          return yield* new NotImplemented({ message: "No Plugin Driver is selected, so there is no plugin catalog." })
        }
      })

    const list = exportedFn("PluginCatalog.list")(function* (namespaceId: NamespaceId, body: typeof ListPlugins.Type) {
      yield* admit(namespaceId)
      return listCatalog(body)
    })

    const details = exportedFn("PluginCatalog.details")(function* (namespaceId: NamespaceId, body: typeof PluginDetailsRequest.Type) {
      yield* admit(namespaceId)
      const entry = catalogEntry(body.pluginId)
      if (entry === undefined) return yield* new NotFound({ message: "The plugin is not in the catalog." })
      return pluginView(entry)
    })

    return { list, details }
  }),
  dependencies: [Authorization.Default, NamespaceGuard.Default]
}) {}
