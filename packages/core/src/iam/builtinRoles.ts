import type { RoleId } from "../schema/ids.js"
import {
  installationAdminPermissions,
  namespaceAdminPermissions,
  namespaceEditorPermissions,
  namespaceViewerPermissions,
  type Permission
} from "./permissions.js"

export interface BuiltinRole {
  readonly id: RoleId
  readonly name: string
  /** `installation`: bound on the Installation; `namespace`: bound on a Namespace or inside one. */
  readonly scope: "installation" | "namespace"
  readonly permissions: ReadonlyArray<Permission>
}

/** Fixed ids, so every Installation and every migration agrees on them. */
export const BuiltinRoles = {
  installationAdmin: {
    id: "role_00000000-0000-4000-8000-000000000001" as RoleId,
    name: "installation-admin",
    scope: "installation",
    permissions: installationAdminPermissions
  },
  namespaceAdmin: {
    id: "role_00000000-0000-4000-8000-000000000002" as RoleId,
    name: "namespace-admin",
    scope: "namespace",
    permissions: namespaceAdminPermissions
  },
  namespaceEditor: {
    id: "role_00000000-0000-4000-8000-000000000003" as RoleId,
    name: "namespace-editor",
    scope: "namespace",
    permissions: namespaceEditorPermissions
  },
  namespaceViewer: {
    id: "role_00000000-0000-4000-8000-000000000004" as RoleId,
    name: "namespace-viewer",
    scope: "namespace",
    permissions: namespaceViewerPermissions
  }
} as const satisfies Record<string, BuiltinRole>
