/**
 * How Agent rows read back (SPEC 2.4): the saved settings are decoded field by field, and a
 * field that no longer decodes is omitted and reported as `configurationReadError`.
 */
import type { AgentRow } from "@svc/core/db"
import { NotFound } from "@svc/core/errors"
import { readSavedSettings } from "@svc/core/api"
import type { Agent } from "@svc/core/api"

/** SPEC 2.4: the profile of a direct repository binding that names none. */
export const DIRECT_BINDING_PROFILE = "git-write"

export const agentNotFound = () => new NotFound({ message: "The Agent does not exist." })

export const toAgent = (row: AgentRow): Agent => {
  const { settings, unreadable } = readSavedSettings(row.settings)
  const bindings = settings.repositoryBindings
  return {
    id: row.id,
    namespaceId: row.namespace_id,
    name: row.name,
    configurationId: row.configuration_id,
    executionMode: row.execution_mode,
    backendId: row.backend_id,
    ...(unreadable.includes("harnessAuth") ? {} : { harnessAuth: settings.harnessAuth ?? null }),
    ...(settings.plugins === undefined ? {} : { plugins: settings.plugins }),
    ...(settings.pluginApprovers === undefined ? {} : { pluginApprovers: settings.pluginApprovers }),
    // SPEC 2.4: the array is shown only when non-empty, each binding with its profile (direct
    // bindings default to `git-write`).
    ...(bindings === undefined || bindings.length === 0
      ? {}
      : { repositoryBindings: bindings.map((b) => ({ ...b, profile: b.profile ?? DIRECT_BINDING_PROFILE })) }),
    ...(settings.repositoryAccess === undefined ? {} : { repositoryAccess: settings.repositoryAccess }),
    ...(row.workspace_defaults_id === null ? {} : { workspaceDefaultsId: row.workspace_defaults_id }),
    servicePrincipalId: row.service_principal_id,
    status: row.status,
    desiredRuntimeState: row.desired_runtime_state,
    ...(row.active_revision_id === null ? {} : { activeRevisionId: row.active_revision_id }),
    ...(unreadable.length === 0 ? {} : { configurationReadError: { code: "SAVED_CONFIGURATION_UNREADABLE", field: unreadable[0]! } }),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}
