import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { SvcApi } from "@svc/core/api"
import { pageOf } from "./access.js"
import { createBinding, deleteBinding, getBinding, listBindings } from "./bindings.js"
import { IamRoles } from "./roles.js"
import {
  createServicePrincipal,
  deleteServicePrincipal,
  getServicePrincipal,
  listServicePrincipals
} from "./servicePrincipals.js"

export const IamRolesLive = HttpApiBuilder.group(SvcApi, "iamRoles", (handlers) =>
  Effect.map(IamRoles, (roles) =>
    handlers
      .handle("create", ({ path, payload }) => roles.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => roles.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => roles.get(path.namespaceId, path.roleId))
      .handle("delete", ({ path }) => roles.delete(path.namespaceId, path.roleId))
  )
)

export const IamAccessBindingsLive = HttpApiBuilder.group(SvcApi, "iamAccessBindings", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const withSql = Effect.provideService(SqlClient.SqlClient, sql)
    return handlers
      .handle("create", ({ path, payload }) => withSql(createBinding(path.namespaceId, payload)))
      .handle("list", ({ path, urlParams }) => withSql(listBindings(path.namespaceId, pageOf(urlParams))))
      .handle("get", ({ path }) => withSql(getBinding(path.namespaceId, path.bindingId)))
      .handle("delete", ({ path }) => withSql(deleteBinding(path.namespaceId, path.bindingId)))
  })
)

export const IamServicePrincipalsLive = HttpApiBuilder.group(SvcApi, "iamServicePrincipals", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const withSql = Effect.provideService(SqlClient.SqlClient, sql)
    return handlers
      .handle("createInstallation", ({ payload }) => withSql(createServicePrincipal(null, payload.name)))
      .handle("listInstallation", ({ urlParams }) => withSql(listServicePrincipals(null, pageOf(urlParams))))
      .handle("getInstallation", ({ path }) => withSql(getServicePrincipal(null, path.servicePrincipalId)))
      .handle("deleteInstallation", ({ path }) => withSql(deleteServicePrincipal(null, path.servicePrincipalId)))
      .handle("createNamespace", ({ path, payload }) => withSql(createServicePrincipal(path.namespaceId, payload.name)))
      .handle("listNamespace", ({ path, urlParams }) =>
        withSql(listServicePrincipals(path.namespaceId, pageOf(urlParams))))
      .handle("getNamespace", ({ path }) => withSql(getServicePrincipal(path.namespaceId, path.servicePrincipalId)))
      .handle("deleteNamespace", ({ path }) => withSql(deleteServicePrincipal(path.namespaceId, path.servicePrincipalId)))
  })
)

/** Every IAM group, wired. Needs an SqlClient and the Authentication middleware. */
export const IamLive = Layer.mergeAll(IamRolesLive, IamAccessBindingsLive, IamServicePrincipalsLive)
