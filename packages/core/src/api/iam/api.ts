/**
 * The IAM HTTP contract (SPEC 4.7, DESIGN §6): Namespace Roles and AccessBindings, and service
 * principals for automation. Every endpoint is authenticated; handlers authorize the exact resource.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { idempotent } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import { BindingId, Envelope, ListEnvelope, NamespaceId, RoleId, ServicePrincipalId } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import {
  AccessBinding,
  CreateBinding,
  CreateRole,
  CreateServicePrincipal,
  PageParams,
  Role,
  ServicePrincipal
} from "./schemas.js"

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })
const RolePath = Schema.Struct({ namespaceId: NamespaceId, roleId: RoleId })
const BindingPath = Schema.Struct({ namespaceId: NamespaceId, bindingId: BindingId })
const ServicePrincipalPath = Schema.Struct({ servicePrincipalId: ServicePrincipalId })
const NamespaceServicePrincipalPath = Schema.Struct({ namespaceId: NamespaceId, servicePrincipalId: ServicePrincipalId })

export const RoleList = Schema.Array(Role)
export const AccessBindingList = Schema.Array(AccessBinding)
export const ServicePrincipalList = Schema.Array(ServicePrincipal)

export const IamRolesApi = HttpApiGroup.make("iamRoles")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/iam/roles")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateRole)
      .addSuccess(Envelope(Role, "RoleResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create a custom Namespace Role (needs iam_role:create on the Namespace)")
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/iam/roles")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(RoleList, "RoleListResponse"))
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "List the Roles bindable in a Namespace (needs installation:administer and namespace:read; filtered by iam_role:read)"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/iam/roles/:roleId")
      .setPath(RolePath)
      .addSuccess(Envelope(Role, "RoleResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read one Role (needs iam_role:read)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/iam/roles/:roleId")
      .setPath(RolePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete a custom Role; 409 while an AccessBinding references it (needs iam_role:delete)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "IAM Roles")
  .annotate(OpenApi.Description, "Immutable permission sets bindable inside a Namespace")

export const IamAccessBindingsApi = HttpApiGroup.make("iamAccessBindings")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/iam/access-bindings")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateBinding)
      .addSuccess(Envelope(AccessBinding, "AccessBindingResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "Grant a Role on the Namespace or one resource in it (needs iam_access_binding:create on the Namespace, read on the target, and every permission of the Role on the target)"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/iam/access-bindings")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(AccessBindingList, "AccessBindingListResponse"))
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "List a Namespace's AccessBindings (needs installation:administer and namespace:read; filtered by iam_access_binding:read)"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/iam/access-bindings/:bindingId")
      .setPath(BindingPath)
      .addSuccess(Envelope(AccessBinding, "AccessBindingResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read one AccessBinding (needs iam_access_binding:read)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/iam/access-bindings/:bindingId")
      .setPath(BindingPath)
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Remove an AccessBinding (needs iam_access_binding:delete)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "IAM AccessBindings")
  .annotate(OpenApi.Description, "Immutable grants of one Role to one principal on one exact resource")

export const IamServicePrincipalsApi = HttpApiGroup.make("iamServicePrincipals")
  .add(
    HttpApiEndpoint.post("createInstallation", "/iam/service-principals")
      .pipe(idempotent)
      .setPayload(CreateServicePrincipal)
      .addSuccess(Envelope(ServicePrincipal, "ServicePrincipalResponse"), { status: 201 })
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create an Installation-scoped service principal (needs installation:administer)")
  )
  .add(
    HttpApiEndpoint.get("listInstallation", "/iam/service-principals")
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(ServicePrincipalList, "ServicePrincipalListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List Installation-scoped service principals (needs installation:administer)")
  )
  .add(
    HttpApiEndpoint.get("getInstallation", "/iam/service-principals/:servicePrincipalId")
      .setPath(ServicePrincipalPath)
      .addSuccess(Envelope(ServicePrincipal, "ServicePrincipalResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read an Installation-scoped service principal (needs installation:administer)")
  )
  .add(
    HttpApiEndpoint.del("deleteInstallation", "/iam/service-principals/:servicePrincipalId")
      .setPath(ServicePrincipalPath)
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete an Installation-scoped service principal; its keys stop working (needs installation:administer)")
  )
  .add(
    HttpApiEndpoint.post("createNamespace", "/namespaces/:namespaceId/iam/service-principals")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateServicePrincipal)
      .addSuccess(Envelope(ServicePrincipal, "ServicePrincipalResponse"), { status: 201 })
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create a Namespace-scoped service principal (needs namespace:read and installation:administer)")
  )
  .add(
    HttpApiEndpoint.get("listNamespace", "/namespaces/:namespaceId/iam/service-principals")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(ServicePrincipalList, "ServicePrincipalListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List a Namespace's service principals (needs namespace:read and installation:administer)")
  )
  .add(
    HttpApiEndpoint.get("getNamespace", "/namespaces/:namespaceId/iam/service-principals/:servicePrincipalId")
      .setPath(NamespaceServicePrincipalPath)
      .addSuccess(Envelope(ServicePrincipal, "ServicePrincipalResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read a Namespace-scoped service principal (needs namespace:read and installation:administer)")
  )
  .add(
    HttpApiEndpoint.del("deleteNamespace", "/namespaces/:namespaceId/iam/service-principals/:servicePrincipalId")
      .setPath(NamespaceServicePrincipalPath)
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete a Namespace-scoped service principal; its keys stop working (needs namespace:read and installation:administer)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "IAM service principals")
  .annotate(OpenApi.Description, "Non-Agent automation identities; keys for them are issued with POST /api/auth/service-keys")
