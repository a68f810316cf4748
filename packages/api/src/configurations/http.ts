import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { Configurations } from "./service.js"

/** The Configurations group: each handler calls the service, which authorizes the exact resource. */
export const ConfigurationsLive = HttpApiBuilder.group(SvcApi, "configurations", (handlers) =>
  Effect.map(Configurations, (configurations) =>
    handlers
      .handle("create", ({ path, payload }) => configurations.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => configurations.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => configurations.get(path.namespaceId, path.configurationId))
      .handle("update", ({ path, payload }) => configurations.update(path.namespaceId, path.configurationId, payload))
      .handle("delete", ({ path }) => configurations.delete(path.namespaceId, path.configurationId))
  )
)
