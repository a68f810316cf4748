import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { PluginCatalog } from "./pluginCatalog.js"

/** The Agent plugins group: the catalog service authorizes the Namespace. */
export const AgentPluginsLive = HttpApiBuilder.group(SvcApi, "agentPlugins", (handlers) =>
  Effect.gen(function* () {
    const catalog = yield* PluginCatalog
    return handlers
      .handle("list", ({ path, payload }) => catalog.list(path.namespaceId, payload))
      .handle("details", ({ path, payload }) => catalog.details(path.namespaceId, payload))
  })
)
