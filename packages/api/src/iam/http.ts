import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { SvcApi } from "@svc/core/api"
import { pageOf } from "./access.js"
import { createBinding, deleteBinding, getBinding, listBindings } from "./bindings.js"
import { IamRoles } from "./roles.js"
import { IamServicePrincipals } from "./servicePrincipals.js"

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
  Effect.map(IamServicePrincipals, (principals) =>
    handlers
      .handle("createInstallation", ({ payload }) => principals.create(null, payload.name))
      .handle("listInstallation", ({ urlParams }) => principals.list(null, urlParams))
      .handle("getInstallation", ({ path }) => principals.get(null, path.servicePrincipalId))
      .handle("deleteInstallation", ({ path }) => principals.delete(null, path.servicePrincipalId))
      .handle("createNamespace", ({ path, payload }) => principals.create(path.namespaceId, payload.name))
      .handle("listNamespace", ({ path, urlParams }) => principals.list(path.namespaceId, urlParams))
      .handle("getNamespace", ({ path }) => principals.get(path.namespaceId, path.servicePrincipalId))
      .handle("deleteNamespace", ({ path }) => principals.delete(path.namespaceId, path.servicePrincipalId))
  )
)

/** Every IAM group, wired. Needs an SqlClient and the Authentication middleware. */
export const IamLive = Layer.mergeAll(IamRolesLive, IamAccessBindingsLive, IamServicePrincipalsLive)
