import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { Presets } from "./service.js"

/** The Presets group: each handler calls the service, which authorizes the exact resource. */
export const PresetsLive = HttpApiBuilder.group(SvcApi, "presets", (handlers) =>
  Effect.map(Presets, (presets) =>
    handlers
      .handle("create", ({ path, payload }) => presets.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => presets.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => presets.get(path.namespaceId, path.presetId))
      .handle("update", ({ path, payload }) => presets.update(path.namespaceId, path.presetId, payload))
      .handle("delete", ({ path }) => presets.delete(path.namespaceId, path.presetId))
  )
)
