/**
 * What a revision's frozen plugin selection asks of its gateway (DESIGN §15), before anything is
 * fetched: the enabled plugins of the catalog, each with the tools it denies and the hook policy
 * of its `driverPolicy`, and the plugins that cannot be enabled because the deployed
 * Configuration gives them no credential (`PLUGIN_AUTH_REQUIRED`, SPEC 2.7). Disabled plugins
 * are left out: `enabled: false` beats every tool override (SPEC 2.9). Pure.
 */
import { type CatalogEntry, catalogEntry } from "./catalog.js"
import type { PluginSelectionShape } from "./policy.js"

export type PluginWarningCode = "PLUGIN_INSTALL_FAILED" | "PLUGIN_AUTH_REQUIRED"

export interface PluginWarning {
  readonly code: PluginWarningCode
  readonly pluginId: string
}

export interface PlannedPlugin {
  readonly entry: CatalogEntry
  /** Tool IDs the gateway must not offer. */
  readonly deniedTools: ReadonlyArray<string>
  readonly hooks: { readonly allowPromptInjection?: boolean; readonly allowConversationAccess?: boolean }
}

export interface DeployedConfiguration {
  readonly values: Readonly<Record<string, unknown>>
  /** Destination variable names of the Configuration's Secret bindings. */
  readonly secretVariables: ReadonlyArray<string>
}

const valueAt = (values: unknown, keys: ReadonlyArray<string>): unknown =>
  keys.reduce<unknown>(
    (current, key) => (typeof current === "object" && current !== null && !Array.isArray(current) ? (current as Record<string, unknown>)[key] : undefined),
    values
  )

const isSet = (value: unknown) => value !== undefined && value !== null && value !== ""

const hasCredential = (entry: CatalogEntry, configuration: DeployedConfiguration): boolean =>
  entry.auth === undefined ||
  entry.auth.env.some((name) => configuration.secretVariables.includes(name)) ||
  entry.auth.configPaths.some((keys) => isSet(valueAt(configuration.values, keys)))

const deniedToolsOf = (entry: CatalogEntry, selection: PluginSelectionShape) =>
  (entry.tools ?? [])
    .filter((tool) => !(selection.tools?.[tool.id]?.enabled ?? selection.toolDefaults?.enabled ?? true))
    .map((tool) => tool.id)

export const planPlugins = (
  plugins: Readonly<Record<string, PluginSelectionShape>>,
  configuration: DeployedConfiguration
): { readonly planned: ReadonlyArray<PlannedPlugin>; readonly warnings: ReadonlyArray<PluginWarning> } => {
  const planned: Array<PlannedPlugin> = []
  const warnings: Array<PluginWarning> = []
  for (const [id, selection] of Object.entries(plugins).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!selection.enabled) continue
    const entry = catalogEntry(id)
    // An ID the catalog dropped since the revision was admitted cannot be installed any more.
    if (entry === undefined) {
      warnings.push({ code: "PLUGIN_INSTALL_FAILED", pluginId: id })
      continue
    }
    if (!hasCredential(entry, configuration)) {
      warnings.push({ code: "PLUGIN_AUTH_REQUIRED", pluginId: id })
      continue
    }
    const policy = (selection.driverPolicy ?? {}) as PlannedPlugin["hooks"]
    planned.push({ entry, deniedTools: deniedToolsOf(entry, selection), hooks: policy })
  }
  return { planned, warnings }
}
