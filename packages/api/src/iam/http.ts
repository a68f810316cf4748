import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { SvcApi } from "@svc/core/api"
import { IamAccessBindings } from "./bindings.js"
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
  Effect.map(IamAccessBindings, (bindings) =>
    handlers
      .handle("create", ({ path, payload }) => bindings.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => bindings.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => bindings.get(path.namespaceId, path.bindingId))
      .handle("delete", ({ path }) => bindings.delete(path.namespaceId, path.bindingId))
  )
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

/** Every IAM group, wired. Needs the IAM services (`FeatureServicesLive`) and the Authentication middleware. */
export const IamLive = Layer.mergeAll(IamRolesLive, IamAccessBindingsLive, IamServicePrincipalsLive)
