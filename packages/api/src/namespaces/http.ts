import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { InstallationConfiguration } from "@svc/core/config"
import { WorkOutboxLive } from "@svc/core/work"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { pageOf } from "../iam/access.js"
import { createNamespace, deleteNamespace, getNamespace, listNamespaces } from "./namespaces.js"

/** The Namespaces group, wired. Needs an SqlClient and the InstallationConfiguration. */
export const NamespacesLive = HttpApiBuilder.group(SvcApi, "namespaces", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const installation = yield* InstallationConfiguration
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.provideService(InstallationConfiguration, installation),
        Effect.provide(WorkOutboxLive)
      )
    return handlers
      .handle("create", ({ payload }) => provide(createNamespace(payload)))
      .handle("list", ({ urlParams }) => provide(listNamespaces(pageOf(urlParams))))
      .handle("get", ({ path }) => provide(getNamespace(path.namespaceId)))
      .handle("delete", ({ path }) => provide(deleteNamespace(path.namespaceId)))
  })
)
