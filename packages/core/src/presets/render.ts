/**
 * Rendering a Preset (DESIGN §7): the variables a caller supplies, checked against the
 * template's declarations, substituted into `agent` and `configuration`; the result is checked
 * as an Agent draft's settings would be. Pure: no I/O, no clock. The rules are in
 * docs/decisions/presets.md.
 */
import { Data, Either, ParseResult, Schema } from "effect"
import { detailsFromIssues, jsonPointer } from "../errors/details.js"
import type { ErrorDetail } from "../errors/detail.js"
import { AgentLaunchSettings, ConfigurationDocument } from "../schema/agentSettings.js"
import { parseTemplateString, wholeReference } from "./placeholders.js"
import { isOfType, passwordVariables, type PresetTemplate, referencesAny } from "./template.js"

/**
 * Every problem of one rendering, each at a JSON Pointer: `/variables/<name>` for a variable
 * (missing, unknown, of the wrong type, not finite), `/agent/...` and `/configuration/...` for a
 * rendered value that is not valid there. Never carries a variable's value.
 */
export class PresetRenderError extends Data.TaggedError("PresetRenderError")<{
  readonly problems: ReadonlyArray<ErrorDetail>
}> {}

export interface RenderedPreset {
  readonly agent: AgentLaunchSettings
  readonly configuration: ConfigurationDocument | undefined
}

type Value = string | number | boolean

const Rendered = Schema.Struct({ agent: AgentLaunchSettings, configuration: Schema.optional(ConfigurationDocument) })

const variablePointer = (name: string) => jsonPointer(["variables", name])

/** The value of each variable that has one (supplied or default), or the problems of `supplied`. */
const resolve = (
  template: PresetTemplate,
  supplied: Readonly<Record<string, unknown>>
): Either.Either<ReadonlyMap<string, Value>, ReadonlyArray<ErrorDetail>> => {
  const declared = template.variables ?? {}
  const problems: Array<ErrorDetail> = []
  const values = new Map<string, Value>()
  for (const name of Object.keys(supplied)) {
    if (!Object.hasOwn(declared, name)) problems.push({ code: "UNKNOWN_FIELD", path: variablePointer(name) })
  }
  for (const [name, variable] of Object.entries(declared)) {
    const value = Object.hasOwn(supplied, name) ? supplied[name] : undefined
    if (value === undefined) {
      if (variable.default !== undefined) values.set(name, variable.default as Value)
      else if (variable.required !== false) problems.push({ code: "REQUIRED", path: variablePointer(name) })
      continue
    }
    if (isOfType(variable.type, value)) values.set(name, value as Value)
    else if (variable.type === "number" && typeof value === "number") problems.push({ code: "INVALID_VALUE", path: variablePointer(name) })
    else problems.push({ code: "INVALID_TYPE", path: variablePointer(name) })
  }
  return problems.length > 0 ? Either.left(problems) : Either.right(values)
}

interface Substitution {
  readonly values: ReadonlyMap<string, Value>
  /** `password` variables: never rendered into settings, which are readable. */
  readonly passwords: ReadonlySet<string>
  readonly problems: Array<ErrorDetail>
}

/** `value` (at `root`) with every string rendered; a reference to a variable without a value is a problem. */
const substitute = (value: unknown, root: string, substitution: Substitution): unknown => {
  const go = (current: unknown, path: ReadonlyArray<string | number>): unknown => {
    if (typeof current === "string") return renderString(current, path, substitution)
    if (Array.isArray(current)) return current.map((item, index) => go(item, [...path, index]))
    if (typeof current === "object" && current !== null) {
      return Object.fromEntries(Object.entries(current).map(([key, item]) => [key, go(item, [...path, key])]))
    }
    return current
  }
  return go(value, [root])
}

const renderString = (text: string, path: ReadonlyArray<string | number>, { passwords, problems, values }: Substitution): unknown => {
  const parsed = parseTemplateString(text)
  // An admitted template has no malformed `{{`; a template that skipped admission gets no pass.
  if (parsed._tag === "Malformed") {
    problems.push({ code: "INVALID_VALUE", path: "" })
    return text
  }
  // Admission refuses this; a template stored before that rule must not leak either.
  if (referencesAny(parsed.segments, passwords)) {
    problems.push({ code: "INVALID_VALUE", path: jsonPointer(path) })
    return text
  }
  const valueOf = (name: string): Value | undefined => {
    const value = values.get(name)
    if (value === undefined) problems.push({ code: "REQUIRED", path: variablePointer(name) })
    return value
  }
  const whole = wholeReference(parsed.segments)
  if (whole !== undefined) return valueOf(whole) ?? text
  return parsed.segments.map((segment) => ("text" in segment ? segment.text : String(valueOf(segment.variable) ?? ""))).join("")
}

const unique = (problems: ReadonlyArray<ErrorDetail>): Array<ErrorDetail> => {
  const seen = new Set<string>()
  return problems.filter((problem) => {
    const key = `${problem.code} ${problem.path}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * Renders `template` with `variables`: the launch settings and Configuration document a new
 * Agent draft gets, or every problem. A `password` variable is never rendered into the output
 * (it would be readable there): a placement is an INVALID_VALUE problem at its pointer.
 */
export const renderPreset = (
  template: PresetTemplate,
  variables: Readonly<Record<string, unknown>>
): Either.Either<RenderedPreset, PresetRenderError> =>
  Either.gen(function* () {
    const values = yield* Either.mapLeft(resolve(template, variables), (problems) => new PresetRenderError({ problems }))
    const problems: Array<ErrorDetail> = []
    const substitution: Substitution = { values, passwords: passwordVariables(template.variables), problems }
    const rendered = {
      agent: substitute(template.agent ?? {}, "agent", substitution),
      ...(template.configuration === undefined ? {} : { configuration: substitute(template.configuration, "configuration", substitution) })
    }
    if (problems.length > 0) return yield* Either.left(new PresetRenderError({ problems: unique(problems) }))
    return yield* ParseResult.decodeUnknownEither(Rendered, { errors: "all", onExcessProperty: "error" })(rendered).pipe(
      Either.map((decoded): RenderedPreset => ({ agent: decoded.agent, configuration: decoded.configuration })),
      Either.mapLeft((issue) =>
        new PresetRenderError({ problems: detailsFromIssues(ParseResult.ArrayFormatter.formatIssueSync(issue)) })
      )
    )
  })
