/**
 * Renders a gateway's `openclaw.json` from the Configuration's `values` (the native OpenClaw
 * configuration document the user supplies) and the settings this driver enforces. Pure.
 *
 * Merge rule: user values are deep-merged under the enforced settings; **enforced wins** at every
 * enforced path, and some user subtrees are replaced or clamped rather than merged:
 *
 * - `gateway.mode` "local", `gateway.bind` "loopback", `gateway.port` (the Agent's port);
 * - `gateway.auth` is replaced by `{mode: "token"}`: the token reaches the process only as
 *   `OPENCLAW_GATEWAY_TOKEN`, so no secret is written to disk and a user token/password is dropped;
 * - `gateway.tailscale` is replaced by `{mode: "off"}` (no exposure beyond loopback);
 * - `gateway.http.endpoints.chatCompletions.enabled` true (the model probe and callers use it);
 * - `update.checkOnStart` false, `update.auto.enabled` false, `telemetry.enabled` false,
 *   `discovery.mdns.mode` "off", `models.catalogRefresh.enabled` false: no traffic of its own;
 * - `agents.defaults.heartbeat.every` "0m" (and in every `agents.entries.*.heartbeat`): no turns
 *   nobody asked for;
 * - `agents.defaults.workspace` is the Agent's workspace directory; `agents.defaults.cwd` and
 *   `agents.entries.*.{workspace,cwd,agentDir}` are removed (no directories outside the Agent's);
 * - host command execution: `tools.exec` (and every `agents.entries.*.tools.exec`) keeps the user's
 *   policy only when it is `security: "deny"`, or `security: "allowlist"` with `ask` "on-miss" or
 *   "always" (approval-gated); anything else (the permissive default, "full", `ask: "off"`)
 *   becomes `security: "deny"`. `tools.elevated.enabled` is false everywhere and
 *   `agents.defaults.elevatedDefault` "off" (elevated "full" would skip approvals);
 * - `logging.file` is in the Agent's log directory (the default is a shared `/tmp/openclaw`);
 * - `tools.fs.workspaceOnly` true: the file tools stay in the workspace (OS confinement is the
 *   boundary, this keeps the model out of the rest of its own tree, e.g. its state and logs);
 * - `env.shellEnv.enabled` false: no environment imported from a login shell;
 * - every key that names a host path or sets a reserved variable (`refusedGatewayValues` in
 *   `@svc/core/schema`, refused at admission too) is dropped;
 * - the revision's plugins (DESIGN §15): `plugins.load.paths` is exactly their directories,
 *   `plugins.entries.<id>` is `enabled: true` with the hook policy of their `driverPolicy`, a
 *   restrictive `plugins.allow` of the user's also lists them, and the tools the selection
 *   disables join `tools.deny`.
 *
 * Everything else is the user's, validated by OpenClaw itself: an unknown key makes the gateway
 * exit 78, which the supervisor reports as `GATEWAY_CONFIG_REJECTED`.
 */

import { withoutRefusedGatewayValues } from "../../../schema/gatewayValues.js"

export type JsonObject = { [key: string]: unknown }

/** The revision's plugins as placed in the Agent's directory (`pluginFiles.ts`). */
export interface PluginRendering {
  readonly loadPaths: ReadonlyArray<string>
  readonly entries: Readonly<Record<string, { readonly hooks: Readonly<Record<string, boolean>> }>>
  readonly deniedTools: ReadonlyArray<string>
}

export interface EnforcedGatewaySettings {
  readonly port: number
  readonly workspace: string
  readonly logFile: string
  readonly plugins?: PluginRendering | undefined
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `base` with `override` merged in; `override` wins wherever both have a non-object value. */
const deepMerge = (base: JsonObject, override: JsonObject): JsonObject => {
  const merged: JsonObject = { ...base }
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key]
    merged[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value
  }
  return merged
}

const objectAt = (value: unknown): JsonObject => (isObject(value) ? value : {})

/** A copy without the given keys. */
const without = (value: JsonObject, keys: ReadonlyArray<string>): JsonObject =>
  Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)))

const APPROVAL_GATED_ASK = new Set(["on-miss", "always"])

/** The user's exec policy when it denies or approval-gates host commands; otherwise denied. */
export const clampExecPolicy = (exec: unknown): JsonObject => {
  const policy = objectAt(exec)
  if (policy.security === "deny") return policy
  if (policy.security === "allowlist" && APPROVAL_GATED_ASK.has(policy.ask as string)) return policy
  return { ...policy, security: "deny" }
}

const clampTools = (tools: unknown, { always }: { readonly always: boolean }): JsonObject | undefined => {
  if (!isObject(tools) && !always) return undefined
  const value = objectAt(tools)
  const clamped: JsonObject = { ...value }
  if (always || value.exec !== undefined) clamped.exec = clampExecPolicy(value.exec)
  if (always || value.elevated !== undefined) clamped.elevated = { ...objectAt(value.elevated), enabled: false }
  return clamped
}

const clampAgentEntry = (entry: unknown): unknown => {
  if (!isObject(entry)) return entry
  const clamped = without(entry, ["workspace", "cwd", "agentDir"])
  if (clamped.heartbeat !== undefined) clamped.heartbeat = { ...objectAt(clamped.heartbeat), every: "0m" }
  const tools = clampTools(clamped.tools, { always: false })
  if (tools !== undefined) clamped.tools = tools
  return clamped
}

const strings = (value: unknown): Array<string> => (Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [])

/** `document` with the revision's plugins loaded, enabled and gated. */
const withPlugins = (document: JsonObject, rendering: PluginRendering | undefined): JsonObject => {
  if (rendering === undefined || rendering.loadPaths.length === 0) return document
  const plugins = objectAt(document.plugins)
  const ids = Object.keys(rendering.entries)
  const entries = { ...objectAt(plugins.entries) }
  for (const [id, entry] of Object.entries(rendering.entries)) {
    const current = objectAt(entries[id])
    entries[id] = { ...current, enabled: true, hooks: { ...objectAt(current.hooks), ...entry.hooks } }
  }
  const tools = objectAt(document.tools)
  return {
    ...document,
    plugins: {
      ...plugins,
      ...(Array.isArray(plugins.allow) ? { allow: [...new Set([...strings(plugins.allow), ...ids])] } : {}),
      ...(Array.isArray(plugins.deny) ? { deny: strings(plugins.deny).filter((id) => !ids.includes(id)) } : {}),
      load: { ...objectAt(plugins.load), paths: [...rendering.loadPaths] },
      entries
    },
    tools: rendering.deniedTools.length === 0 ? tools : { ...tools, deny: [...new Set([...strings(tools.deny), ...rendering.deniedTools])] }
  }
}

/** The configuration document the gateway is started with. */
export const renderGatewayConfig = (values: JsonObject, enforced: EnforcedGatewaySettings): JsonObject =>
  withPlugins(renderEnforced(values, enforced), enforced.plugins)

const renderEnforced = (values: JsonObject, enforced: EnforcedGatewaySettings): JsonObject => {
  const user = objectAt(withoutRefusedGatewayValues(objectAt(values)))
  const gateway = objectAt(user.gateway)
  const agents = objectAt(user.agents)
  const defaults = without(objectAt(agents.defaults), ["cwd"])
  const entries = objectAt(agents.entries)
  const userWithReplacements: JsonObject = {
    ...user,
    gateway: without(gateway, ["auth", "tailscale"]),
    tools: { ...clampTools(user.tools, { always: true }), fs: { ...objectAt(objectAt(user.tools).fs), workspaceOnly: true } },
    agents: {
      ...agents,
      defaults,
      ...(agents.entries === undefined ? {} : {
        entries: Object.fromEntries(Object.entries(entries).map(([id, entry]) => [id, clampAgentEntry(entry)]))
      })
    }
  }
  return deepMerge(userWithReplacements, {
    gateway: {
      mode: "local",
      bind: "loopback",
      port: enforced.port,
      auth: { mode: "token" },
      tailscale: { mode: "off" },
      http: { endpoints: { chatCompletions: { enabled: true } } }
    },
    update: { checkOnStart: false, auto: { enabled: false } },
    telemetry: { enabled: false },
    discovery: { mdns: { mode: "off" } },
    models: { catalogRefresh: { enabled: false } },
    agents: {
      defaults: { workspace: enforced.workspace, heartbeat: { every: "0m" }, elevatedDefault: "off" }
    },
    env: { shellEnv: { enabled: false } },
    logging: { file: enforced.logFile }
  })
}

/** The file content: JSON is valid JSON5. */
export const serializeGatewayConfig = (document: JsonObject): string => `${JSON.stringify(document, null, 2)}\n`
