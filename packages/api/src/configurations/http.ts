import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { pageOf } from "../iam/access.js"
import {
  createConfiguration,
  deleteConfiguration,
  getConfiguration,
  listConfigurations,
  updateConfiguration
} from "./configurations.js"

/** The Configurations group, wired. Needs an SqlClient and the Authentication middleware. */
export const ConfigurationsLive = HttpApiBuilder.group(SvcApi, "configurations", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return handlers
      .handle("create", ({ path, payload }) => provide(createConfiguration(path.namespaceId, payload)))
      .handle("list", ({ path, urlParams }) => provide(listConfigurations(path.namespaceId, pageOf(urlParams))))
      .handle("get", ({ path }) => provide(getConfiguration(path.namespaceId, path.configurationId)))
      .handle("update", ({ path, payload }) => provide(updateConfiguration(path.namespaceId, path.configurationId, payload)))
      .handle("delete", ({ path }) => provide(deleteConfiguration(path.namespaceId, path.configurationId)))
  })
)
