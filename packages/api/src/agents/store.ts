/**
 * Agent rows and how they read back (SPEC 2.4): the saved settings are decoded field by field,
 * and a field that no longer decodes is omitted and reported as `configurationReadError`.
 */
import { SqlClient } from "@effect/sql"
import { NotFound } from "@svc/core/errors"
import type { AgentId, ConfigurationId, NamespaceId, RevisionId } from "@svc/core/schema"
import { Effect } from "effect"
import { type ExecutionMode, readSavedSettings } from "@svc/core/api"
import type { Agent } from "@svc/core/api"

export interface AgentRow {
  readonly id: string
  readonly namespace_id: string
  readonly name: string
  readonly configuration_id: string
  readonly service_principal_id: string
  readonly execution_mode: ExecutionMode
  readonly backend_id: string | null
  readonly settings: Record<string, unknown>
  readonly workspace_defaults_id: string | null
  readonly status: "active" | "deleting"
  readonly desired_runtime_state: "running" | "stopped"
  readonly active_revision_id: string | null
  readonly deletion_initiator: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const AGENT_COLUMNS = `a.id, a.namespace_id, a.name, a.configuration_id, a.service_principal_id, a.execution_mode,
  a.backend_id, a.settings, a.workspace_defaults_id, a.status, a.desired_runtime_state, a.active_revision_id,
  a.deletion_initiator, a.created_at, a.updated_at`

/** SPEC 2.4: the profile of a direct repository binding that names none. */
export const DIRECT_BINDING_PROFILE = "git-write"

export const agentRef = (namespaceId: string, agentId: string) => ({ kind: "agent", id: agentId, namespaceId }) as const

export const agentNotFound = () => new NotFound({ message: "The Agent does not exist." })

export const toAgent = (row: AgentRow): Agent => {
  const { settings, unreadable } = readSavedSettings(row.settings)
  const bindings = settings.repositoryBindings
  return {
    id: row.id as AgentId,
    namespaceId: row.namespace_id as NamespaceId,
    name: row.name,
    configurationId: row.configuration_id as ConfigurationId,
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
    ...(row.active_revision_id === null ? {} : { activeRevisionId: row.active_revision_id as RevisionId }),
    ...(unreadable.length === 0 ? {} : { configurationReadError: { code: "SAVED_CONFIGURATION_UNREADABLE", field: unreadable[0]! } }),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** The Agent under its Namespace (a deleted Namespace's tombstone hides it), optionally locked. */
export const findAgent = (namespaceId: string, agentId: string, lock: boolean) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<AgentRow>`
      SELECT ${sql.unsafe(AGENT_COLUMNS)}
      FROM agents a JOIN namespaces n ON n.id = a.namespace_id
      WHERE a.id = ${agentId} AND a.namespace_id = ${namespaceId} AND n.status <> 'deleted'
      ${lock ? sql`FOR UPDATE OF a` : sql``}
    `.pipe(Effect.orDie)
    return rows[0]
  })

export const requireAgent = (namespaceId: string, agentId: string, lock: boolean) =>
  Effect.flatMap(findAgent(namespaceId, agentId, lock), (row) => row === undefined ? Effect.fail(agentNotFound()) : Effect.succeed(row))
