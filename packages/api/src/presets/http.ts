import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { pageOf } from "../iam/access.js"
import { createPreset, deletePreset, getPreset, listPresets, updatePreset } from "./presets.js"

/** The Presets group, wired. Needs an SqlClient and the Authentication middleware. */
export const PresetsLive = HttpApiBuilder.group(SvcApi, "presets", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return handlers
      .handle("create", ({ path, payload }) => provide(createPreset(path.namespaceId, payload)))
      .handle("list", ({ path, urlParams }) => provide(listPresets(path.namespaceId, pageOf(urlParams))))
      .handle("get", ({ path }) => provide(getPreset(path.namespaceId, path.presetId)))
      .handle("update", ({ path, payload }) => provide(updatePreset(path.namespaceId, path.presetId, payload)))
      .handle("delete", ({ path }) => provide(deletePreset(path.namespaceId, path.presetId)))
  })
)
