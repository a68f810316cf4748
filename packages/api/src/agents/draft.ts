/**
 * An Agent's saved draft as a create or update body gives it (SPEC 2.4): which settings a body
 * supplies, and the Agent row's fields a create-style body and its admitted draft make.
 */
import type { CreateAgent } from "@svc/core/api"
import type { AgentProvisionRequest } from "@svc/core/tenancy"
import { harnessSecretId, type LaunchDraft } from "./admission.js"

export const SETTINGS_FIELDS = ["harnessAuth", "plugins", "pluginApprovers", "repositoryBindings", "repositoryAccess"] as const

/** The settings a body supplies; the two repository forms replace each other (SPEC 2.4). */
export const suppliedSettings = (body: Partial<Record<(typeof SETTINGS_FIELDS)[number], unknown>>) => {
  const supplied: Record<string, unknown> = {}
  for (const field of SETTINGS_FIELDS) if (body[field] !== undefined) supplied[field] = body[field]
  if (body.repositoryBindings !== undefined) supplied.repositoryAccess = undefined
  if (body.repositoryAccess !== undefined) supplied.repositoryBindings = undefined
  return supplied
}

export const withoutUndefined = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))

/**
 * The Agent row's fields a create-style body and its admitted draft give (all but the ids and
 * the Configuration): what `POST .../agents` writes at once, and what Agent provisioning keeps
 * for its transport phase.
 */
export const agentFieldsOf = (body: Omit<typeof CreateAgent.Type, "configurationId">, draft: LaunchDraft): AgentProvisionRequest["agent"] => ({
  name: body.name,
  executionMode: draft.executionMode,
  backendId: draft.backendId,
  settings: withoutUndefined({ ...suppliedSettings(body), harnessAuth: draft.harnessAuth }),
  workspaceDefaultsId: body.workspaceDefaultsId ?? null,
  initialWorkspaceFiles: body.initialWorkspaceFiles ?? null,
  harnessSecretId: harnessSecretId(draft.harnessAuth) ?? null
})
