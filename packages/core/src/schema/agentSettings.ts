/**
 * The Agent launch settings a Preset template carries (SPEC 2.4, 2.5, 2.8, 2.9; DESIGN §7) and
 * the Configuration document beside them, built from the Agent field rules (agentFieldRules.ts)
 * over a choice of string rule: `exactly` checks every string as SPEC says (what rendering
 * produces); Preset templates wrap each checked string so a `{{ vars.x }}` reference may stand in
 * for it until it is rendered.
 */
import { Schema } from "effect"
import { agentFieldRules, exactly, type StringRule } from "./agentFieldRules.js"
import { EnvironmentName } from "./environment.js"
import { JsonObject } from "./json.js"
import { KeyedRecord, keysOf, maxEntries } from "./records.js"
import { Limits } from "./limits.js"
import { PatternString, RequestBody } from "./strings.js"

/** A plugin ID (SPEC 2.9). */
export const PluginId = PatternString(/^[A-Za-z0-9._~:@-]{1,253}$/, Limits.pluginId.max)

/** The Agent launch settings and the Configuration document, with strings admitted by `text`. */
export const launchSettings = (text: StringRule) => {
  const rules = agentFieldRules({ text, named: false, fixedValues: "literal", nulInFile: "INVALID_FORMAT" })
  const AgentLaunchSettings = RequestBody({
    executionMode: Schema.optional(rules.ExecutionMode),
    backendId: Schema.optional(rules.BackendId),
    harnessAuth: Schema.optional(Schema.NullOr(rules.HarnessAuth)),
    initialWorkspaceFiles: Schema.optional(rules.InitialWorkspaceFiles),
    /** A template holds an object per plugin ID; the rendered settings pass the Agent body's plugin rules (SPEC 2.9). */
    plugins: Schema.optional(KeyedRecord(PluginId, JsonObject)),
    pluginApprovers: Schema.optional(rules.PluginApprovers),
    repositoryAccess: Schema.optional(rules.RepositoryAccess)
  })
  const SecretBinding = RequestBody({
    source: rules.SecretSource,
    delivery: Schema.optional(RequestBody({ type: Schema.Literal("env") }))
  })
  const ConfigurationDocument = RequestBody({
    values: JsonObject,
    secretBindings: Schema.optional(
      Schema.Record({ key: Schema.String, value: SecretBinding }).pipe(
        keysOf(EnvironmentName),
        maxEntries(Limits.configurationSecretBindings)
      )
    )
  })
  return { AgentLaunchSettings, ConfigurationDocument }
}

const exact = launchSettings(exactly)
/** Agent launch settings as a rendered Preset gives them (every string checked). */
export const AgentLaunchSettings = exact.AgentLaunchSettings
export type AgentLaunchSettings = typeof AgentLaunchSettings.Type
/** `{values, secretBindings?}` of a Configuration (SPEC 2.8), every string checked. */
export const ConfigurationDocument = exact.ConfigurationDocument
export type ConfigurationDocument = typeof ConfigurationDocument.Type
