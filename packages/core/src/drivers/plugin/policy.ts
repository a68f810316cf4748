/**
 * What the `bundled` Plugin Driver supports of the SPEC 2.9 desired state, and the admission
 * check of a plugin map against it (DESIGN §15: unsupported fields are refused with 400).
 *
 * The gateway loads these plugins and gates them and their tools; it has no configuration for
 * who reviews a plugin's tool calls or where approval prompts go (a plugin asks for approval from
 * its own code). So the driver supports the approval mode `provider_default` only, no explicit
 * reviewer at any scope, and approvers only as the Agent default (saved and frozen, SPEC 2.4).
 * Pure; no Node-only imports.
 */
import type { ErrorDetail } from "../../errors/detail.js"
import { jsonPointer } from "../../errors/details.js"
import { catalogEntry } from "./catalog.js"

export const bundledPolicies = {
  reviewers: { defaults: [] as Array<string>, tool: [] as Array<string> },
  approvers: { agentDefault: true, pluginOverride: false, toolOverride: false },
  approvalModes: ["provider_default"] as Array<string>
}

/** `driverPolicy` fields the driver owns: each is a boolean rendered into the plugin's entry. */
export const DRIVER_POLICY_FIELDS = ["allowPromptInjection", "allowConversationAccess"] as const

/** The shape admission reads (the decoded SPEC 2.9 map). */
interface ToolSettings {
  readonly enabled?: boolean | undefined
  readonly approval?: string | undefined
  readonly reviewer?: string | undefined
  readonly approvers?: ReadonlyArray<unknown> | undefined
}
export interface PluginSelectionShape {
  readonly enabled: boolean
  readonly toolDefaults?: ToolSettings | undefined
  readonly approvers?: ReadonlyArray<unknown> | undefined
  readonly tools?: Readonly<Record<string, ToolSettings>> | undefined
  readonly driverPolicy?: Readonly<Record<string, unknown>> | undefined
}

const detail = (code: ErrorDetail["code"], ...path: ReadonlyArray<string>): ErrorDetail => ({ code, path: jsonPointer(path) })

const toolSettingProblems = (settings: ToolSettings, path: ReadonlyArray<string>, scope: "defaults" | "tool") => {
  const problems: Array<ErrorDetail> = []
  if (settings.approval !== undefined && !bundledPolicies.approvalModes.includes(settings.approval)) {
    problems.push(detail("INVALID_VALUE", ...path, "approval"))
  }
  if (settings.reviewer !== undefined && !bundledPolicies.reviewers[scope].includes(settings.reviewer)) {
    problems.push(detail("INVALID_VALUE", ...path, "reviewer"))
  }
  if (settings.approvers !== undefined && !bundledPolicies.approvers.toolOverride) {
    problems.push(detail("INVALID_VALUE", ...path, "approvers"))
  }
  return problems
}

const driverPolicyProblems = (policy: Readonly<Record<string, unknown>>, path: ReadonlyArray<string>) =>
  Object.entries(policy).flatMap(([key, value]) =>
    !(DRIVER_POLICY_FIELDS as ReadonlyArray<string>).includes(key)
      ? [detail("UNKNOWN_FIELD", ...path, key)]
      : typeof value !== "boolean"
      ? [detail("INVALID_TYPE", ...path, key)]
      : []
  )

/**
 * Every way a structurally valid plugin map asks for what the driver cannot do: an ID outside
 * the catalog, a tool the plugin does not register, an approval mode, reviewer or approvers the
 * driver does not support at that scope, a `driverPolicy` field it does not own. Empty: admitted.
 */
export const selectionProblems = (plugins: Readonly<Record<string, PluginSelectionShape>>): ReadonlyArray<ErrorDetail> =>
  Object.entries(plugins).flatMap(([id, selection]) => {
    const at = ["plugins", id]
    const entry = catalogEntry(id)
    if (entry === undefined) return [detail("INVALID_VALUE", ...at)]
    const problems: Array<ErrorDetail> = []
    if (selection.toolDefaults !== undefined) problems.push(...toolSettingProblems(selection.toolDefaults, [...at, "toolDefaults"], "defaults"))
    if (selection.approvers !== undefined && !bundledPolicies.approvers.pluginOverride) problems.push(detail("INVALID_VALUE", ...at, "approvers"))
    for (const [toolId, settings] of Object.entries(selection.tools ?? {})) {
      if (entry.tools === null || !entry.tools.some((tool) => tool.id === toolId)) {
        problems.push(detail("INVALID_VALUE", ...at, "tools", toolId))
      } else {
        problems.push(...toolSettingProblems(settings, [...at, "tools", toolId], "tool"))
      }
    }
    if (selection.driverPolicy !== undefined) problems.push(...driverPolicyProblems(selection.driverPolicy, [...at, "driverPolicy"]))
    return problems
  })
