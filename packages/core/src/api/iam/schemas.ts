/**
 * Request and response bodies of the IAM HTTP API (DESIGN §6; SPEC 4.7 gives paths only).
 * Roles and AccessBindings are immutable; service principals are named automation identities.
 */
import { isPermission, namespaceAdminPermissions, type Permission } from "../../iam/permissions.js"
import {
  BindingId,
  detailMessage,
  NamespaceId,
  PatternString,
  QueryInt,
  RequestBody,
  ResourceName,
  RoleId,
  ServicePrincipalId,
  Timestamp
} from "../../schema/index.js"
import { Schema } from "effect"

/** Names of Namespaces, Roles, Secrets, Presets (the shared core schema). */
export { ResourceName }

const namespaceCatalogue: ReadonlySet<string> = new Set(namespaceAdminPermissions)

/**
 * A permission a Namespace Role may hold: a valid `<resourceType>:<action>` that exists inside a
 * Namespace, i.e. one of the built-in namespace-admin catalogue. `installation:*` and
 * `namespace:create` act on the Installation; pairs no operation checks (`agent_revision:delete`)
 * would make a Role nobody can bind (a binding never grants more than its creator holds).
 */
export const isNamespacePermission = (value: string): value is Permission =>
  isPermission(value) && namespaceCatalogue.has(value)

export const NamespacePermission = Schema.String.pipe(
  Schema.filter(isNamespacePermission, {
    message: detailMessage("INVALID_VALUE", "must be a Namespace-level <resourceType>:<action> permission")
  })
)

export const MAX_ROLE_PERMISSIONS = 128

export const CreateRole = RequestBody({
  name: ResourceName,
  permissions: Schema.Array(NamespacePermission).pipe(
    Schema.minItems(1, { message: detailMessage("INVALID_VALUE", "must hold at least one permission") }),
    Schema.maxItems(MAX_ROLE_PERMISSIONS, { message: detailMessage("TOO_LONG", `at most ${MAX_ROLE_PERMISSIONS} permissions`) })
  )
}).annotations({ identifier: "CreateRoleRequest" })

export const Role = Schema.Struct({
  id: RoleId,
  /** The owning Namespace; null for a built-in Role (Installation-owned, bindable in every Namespace). */
  namespaceId: Schema.NullOr(NamespaceId),
  name: Schema.String,
  permissions: Schema.Array(Schema.String),
  builtin: Schema.Boolean,
  createdAt: Timestamp
}).annotations({ identifier: "Role" })
export type Role = typeof Role.Type

/** Resource kinds an AccessBinding may name inside a Namespace, and the id shape of each. */
export const BindableKinds = [
  "namespace",
  "agent",
  "agent_revision",
  "configuration",
  "preset",
  "secret",
  "service_account",
  "credential_source",
  "iam_role",
  "iam_access_binding"
] as const
export type BindableKind = (typeof BindableKinds)[number]

const BindingResourceKind = Schema.String.pipe(
  Schema.filter((s): s is BindableKind => (BindableKinds as ReadonlyArray<string>).includes(s), {
    message: detailMessage("INVALID_VALUE", `must be one of ${BindableKinds.join(", ")}`),
    jsonSchema: { enum: BindableKinds }
  })
)

const ResourceIdString = PatternString(/^[A-Za-z0-9._~:@-]+$/, 200).pipe(
  Schema.minLength(1, { message: detailMessage("INVALID_VALUE", "must not be empty") })
)

export const BindingResource = Schema.Struct({ kind: BindingResourceKind, id: ResourceIdString })
  .annotations({ identifier: "BindingResource", parseOptions: { onExcessProperty: "error", errors: "all" } })

const PrincipalIdString = PatternString(/^(prn|sp)_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 200)
  .annotations({ description: "a human Principal (prn_...) or a service principal (sp_...)" })

export const CreateBinding = RequestBody({
  principalId: PrincipalIdString,
  roleId: RoleId,
  resource: BindingResource
}).annotations({ identifier: "CreateAccessBindingRequest" })

export const AccessBinding = Schema.Struct({
  id: BindingId,
  namespaceId: NamespaceId,
  principalId: Schema.String,
  roleId: RoleId,
  resource: Schema.Struct({ kind: Schema.String, id: Schema.String }),
  createdAt: Timestamp
}).annotations({ identifier: "AccessBinding" })
export type AccessBinding = typeof AccessBinding.Type

export const CreateServicePrincipal = RequestBody({ name: ResourceName })
  .annotations({ identifier: "CreateServicePrincipalRequest" })

export const ServicePrincipal = Schema.Struct({
  id: ServicePrincipalId,
  name: Schema.String,
  namespaceId: Schema.optional(NamespaceId),
  createdAt: Timestamp
}).annotations({ identifier: "ServicePrincipal" })
export type ServicePrincipal = typeof ServicePrincipal.Type

/** Keyset pagination of every IAM list: `limit` items after the id `after`, in id order. */
export const PageParams = Schema.Struct({
  limit: Schema.optional(QueryInt(1, 1000)),
  after: Schema.optional(PatternString(/^[a-z]+_[0-9a-f-]{36}$/, 200))
})
export type PageParams = typeof PageParams.Type
export const DEFAULT_PAGE_SIZE = 100
