/**
 * Permissions are `<resourceType>:<action>` over the actions of SPEC 1.6 and the resource types
 * of DESIGN §6.
 */
export const Actions = ["create", "read", "update", "delete", "operate", "deploy", "administer"] as const
export type Action = (typeof Actions)[number]

export const ResourceTypes = [
  "installation",
  "namespace",
  "agent",
  "agent_revision",
  "configuration",
  "preset",
  "secret",
  "service_account",
  "credential_source",
  "provisioning",
  "iam_role",
  "iam_access_binding"
] as const
export type ResourceType = (typeof ResourceTypes)[number]

export type Permission = `${ResourceType}:${Action}`

export const permission = (type: ResourceType, action: Action): Permission => `${type}:${action}`

const grant = (type: ResourceType, ...actions: ReadonlyArray<Action>): Array<Permission> =>
  actions.map((action) => permission(type, action))

/** DESIGN §6, verbatim. */
export const installationAdminPermissions: ReadonlyArray<Permission> = [
  ...grant("installation", "administer", "read"),
  ...grant("namespace", "create", "read", "delete"),
  ...grant("configuration", "create", "read", "update", "delete"),
  ...grant("service_account", "create", "read", "update", "delete"),
  ...grant("secret", "create", "read", "update", "delete", "operate"),
  ...grant("preset", "create", "read", "update", "delete"),
  ...grant("credential_source", "create", "read", "update", "delete", "operate"),
  ...grant("agent", "create", "read", "update", "delete", "deploy", "operate", "administer"),
  ...grant("agent_revision", "read"),
  ...grant("provisioning", "read", "operate"),
  // Managing IAM inside Namespaces is part of administering the Installation.
  ...grant("iam_role", "create", "read", "delete"),
  ...grant("iam_access_binding", "create", "read", "delete")
]

const isNamespaceLevel = (p: Permission): boolean => !p.startsWith("installation:")

/** The built-in Namespace roles: the administrator's permissions narrowed to one Namespace. */
export const namespaceAdminPermissions: ReadonlyArray<Permission> = installationAdminPermissions.filter(
  (p) => isNamespaceLevel(p) && p !== "namespace:create"
)
export const namespaceEditorPermissions: ReadonlyArray<Permission> = namespaceAdminPermissions.filter(
  (p) => !p.endsWith(":delete") && !p.endsWith(":administer") && !p.startsWith("iam_")
)
export const namespaceViewerPermissions: ReadonlyArray<Permission> = namespaceAdminPermissions.filter((p) =>
  p.endsWith(":read") && !p.startsWith("iam_")
)

export const isPermission = (value: string): value is Permission => {
  const [type, action, ...rest] = value.split(":")
  return rest.length === 0 &&
    (ResourceTypes as ReadonlyArray<string>).includes(type ?? "") &&
    (Actions as ReadonlyArray<string>).includes(action ?? "")
}
