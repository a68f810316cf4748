/**
 * The Preset template (DESIGN §7): typed variables, Agent launch settings and a Configuration
 * document whose strings may hold `{{ vars.<name> }}` references. Admission checks the shape of
 * everything a reference does not stand in for, that every `{{` opens a reference to a declared
 * variable, the size (1 MiB of JSON) and the depth (64).
 */
import { Schema } from "effect"
import { firstTooDeep } from "../http/jsonDepth.js"
import type { StringRule } from "../schema/agentFieldRules.js"
import { launchSettings } from "../schema/agentSettings.js"
import { issueOf, keysOf, maxEntries } from "../schema/records.js"
import { firstUnsafeJson, JsonValue } from "../schema/json.js"
import { detailMessage } from "../schema/detailCodes.js"
import { Limits } from "../schema/limits.js"
import { BoundedString, OneOf, RequestBody, wellFormedText } from "../schema/strings.js"
import { isTemplated, parseTemplateString, type Segment, VARIABLE_NAME, walkJson } from "./placeholders.js"

export const PresetLimits = {
  /** Serialized template, UTF-8 bytes. */
  templateBytes: 1024 * 1024,
  templateDepth: Limits.jsonDepth,
  variables: 64,
  variableDescription: 1024
} as const

/**
 * A checked string, unless it holds `{{`: then the placeholder rules apply and rendering re-checks
 * it. Typed as the checked value (see `StringRule`): a template is only read by rendering.
 */
export const templated: StringRule = <A extends string, I extends string>(checked: Schema.Schema<A, I>) =>
  Schema.String.pipe(
    Schema.filter((s) => (isTemplated(s) ? true : issueOf(checked, s)))
  ) as Schema.Schema<string> as unknown as Schema.Schema<A, I>

export const VariableTypes = ["string", "number", "boolean", "password"] as const
export type VariableType = (typeof VariableTypes)[number]

/** Whether `value` is a value of a variable of `type` (numbers finite). */
export const isOfType = (type: VariableType, value: unknown): boolean => {
  switch (type) {
    case "string":
    case "password":
      return typeof value === "string"
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "boolean":
      return typeof value === "boolean"
  }
}

const issue = (path: ReadonlyArray<PropertyKey>, code: Parameters<typeof detailMessage>[0], text: string) => ({
  path,
  message: detailMessage(code, text)()
})

/**
 * A declared variable. Without `required` it is required unless it has a default; a default
 * has the variable's type, and never on a `password` (the template would hold the secret).
 */
export const PresetVariable = RequestBody({
  type: OneOf(...VariableTypes),
  required: Schema.optional(Schema.Boolean),
  default: Schema.optional(JsonValue),
  description: Schema.optional(BoundedString(1, PresetLimits.variableDescription).pipe(wellFormedText))
}).pipe(
  Schema.filter((variable) => {
    if (variable.default === undefined) return true
    if (variable.type === "password") return issue(["default"], "INVALID_VALUE", "a password variable cannot have a default")
    if (!isOfType(variable.type, variable.default)) return issue(["default"], "INVALID_TYPE", `must be a ${variable.type}`)
    if (variable.required === true) return issue(["default"], "INVALID_VALUE", "a required variable cannot have a default")
    return true
  })
).annotations({ identifier: "PresetVariable", description: "A typed variable of a Preset template" })
export type PresetVariable = typeof PresetVariable.Type

const VariableName = Schema.String.pipe(
  Schema.filter((s) => VARIABLE_NAME.test(s), { message: detailMessage("INVALID_FORMAT", "must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$") })
)

const settings = launchSettings(templated)

const TemplateFields = RequestBody({
  variables: Schema.optional(
    Schema.Record({ key: Schema.String, value: PresetVariable }).pipe(keysOf(VariableName), maxEntries(PresetLimits.variables))
  ),
  agent: Schema.optional(settings.AgentLaunchSettings),
  configuration: Schema.optional(settings.ConfigurationDocument)
})

/**
 * Every rendered setting is readable state: a Namespace viewer reads the Agent and its
 * Configuration `values`, and workspace files are the Agent's own text. A `password` variable
 * may therefore be placed nowhere in `agent` or `configuration` (see docs/decisions/presets.md).
 */
export const PASSWORD_PLACEMENT =
  "a password variable cannot be placed in agent or configuration, where it would be readable"

/** The names of the `password` variables a template declares. */
export const passwordVariables = (
  variables: Readonly<Record<string, { readonly type: string }>> | undefined
): ReadonlySet<string> =>
  new Set(Object.entries(variables ?? {}).flatMap(([name, variable]) => (variable.type === "password" ? [name] : [])))

/** True when a parsed string references one of `names`. */
export const referencesAny = (segments: ReadonlyArray<Segment>, names: ReadonlySet<string>): boolean =>
  segments.some((segment) => "variable" in segment && names.has(segment.variable))

const pathOfPointer = (pointer: string): Array<string> =>
  pointer.split("/").slice(1).map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))

/** The problems of a template as a whole: size, depth, and every `{{` in `agent` and `configuration`. */
const templateIssues = (template: typeof TemplateFields.Type) => {
  const bytes = new TextEncoder().encode(JSON.stringify(template)).length
  if (bytes > PresetLimits.templateBytes) {
    return issue([], "TOO_LONG", `must be at most ${PresetLimits.templateBytes} bytes of JSON`)
  }
  const deep = firstTooDeep(template, PresetLimits.templateDepth)
  if (deep !== undefined) return issue(pathOfPointer(deep), "TOO_DEEP", `nested deeper than ${PresetLimits.templateDepth} levels`)
  // The template is stored as jsonb: a default, or a string that holds a reference (checked
  // only when rendered), must still be text jsonb can hold.
  const unsafe = firstUnsafeJson(template)
  if (unsafe !== undefined) return issue(unsafe.path, "INVALID_VALUE", unsafe.reason)
  const declared = new Set(Object.keys(template.variables ?? {}))
  const passwords = passwordVariables(template.variables)
  const issues: Array<ReturnType<typeof issue>> = []
  walkJson(
    { agent: template.agent, configuration: template.configuration },
    (text, path) => {
      const parsed = parseTemplateString(text)
      if (parsed._tag === "Malformed") {
        issues.push(issue(path, "INVALID_VALUE", "every {{ must open a {{ vars.<name> }} reference"))
        return
      }
      const undeclared = parsed.segments.find((segment) => "variable" in segment && !declared.has(segment.variable))
      if (undeclared !== undefined) issues.push(issue(path, "INVALID_VALUE", "references a variable the template does not declare"))
      else if (referencesAny(parsed.segments, passwords)) issues.push(issue(path, "INVALID_VALUE", PASSWORD_PLACEMENT))
    },
    (key, path) => {
      if (isTemplated(key)) issues.push(issue(path, "INVALID_VALUE", "object keys are never rendered and must not contain {{"))
    }
  )
  return issues
}

export const PresetTemplate = TemplateFields.pipe(Schema.filter(templateIssues)).annotations({
  identifier: "PresetTemplate",
  description:
    "Typed variables, Agent launch settings and a Configuration document; strings of agent and configuration may hold {{ vars.<name> }} references (1 MiB of JSON, depth 64)",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})
export type PresetTemplate = typeof PresetTemplate.Type
