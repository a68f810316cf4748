/**
 * Preset templates and rendering (DESIGN §7, docs/decisions/presets.md): admission of the
 * template schema on its own, and every rendering rule, including each error.
 */
import { describe, expect, it } from "@effect/vitest"
import { detailsFromParseError } from "@svc/core/errors"
import { parseTemplateString, PresetTemplate, renderPreset } from "@svc/core/presets"
import { Effect, Either, Option, Schema } from "effect"

const decode = Schema.decodeUnknownEither(PresetTemplate)
const admit = (template: unknown) => Schema.decodeUnknownSync(PresetTemplate)(template)
const problemsOf = (template: unknown) =>
  Effect.gen(function* () {
    const result = decode(template)
    if (Either.isRight(result)) return "admitted"
    return yield* detailsFromParseError(result.left)
  })

const render = (template: unknown, variables: Record<string, unknown>) => renderPreset(admit(template), variables)
const rendered = (template: unknown, variables: Record<string, unknown>) => Either.getOrThrow(render(template, variables))
const problems = (template: unknown, variables: Record<string, unknown>) =>
  Either.match(render(template, variables), {
    onLeft: (error) => error.problems,
    onRight: () => "rendered"
  })

describe("placeholders", () => {
  it("split a string into text and references; blanks inside the braces are optional", () => {
    expect(parseTemplateString("plain")).toEqual({ _tag: "Parsed", segments: [{ text: "plain" }] })
    expect(parseTemplateString("")).toEqual({ _tag: "Parsed", segments: [] })
    expect(parseTemplateString("a{{vars.x}}b{{ \tvars._Y9 }}")).toEqual({
      _tag: "Parsed",
      segments: [{ text: "a" }, { variable: "x" }, { text: "b" }, { variable: "_Y9" }]
    })
    expect(parseTemplateString("}} alone is text")).toEqual({ _tag: "Parsed", segments: [{ text: "}} alone is text" }] })
  })

  it("every {{ must open a well-formed reference", () => {
    for (const bad of ["{{ x }}", "{{vars.}}", "{{ vars.1x }}", "{{ vars.x }", "{{{ vars.x }}}", "a {{", "{{ vars.x.y }}", `{{ vars.${"x".repeat(65)} }}`]) {
      expect(parseTemplateString(bad)._tag, bad).toBe("Malformed")
    }
  })
})

describe("PresetTemplate admission", () => {
  it.effect("accepts an empty template and one with every part", () =>
    Effect.gen(function* () {
      expect(yield* problemsOf({})).toBe("admitted")
      expect(
        yield* problemsOf({
          variables: { mode: { type: "string" }, pw: { type: "password", description: "the token" } },
          agent: { executionMode: "{{ vars.mode }}", backendId: "{{vars.mode}}-backend", harnessAuth: { method: "runtime" } },
          configuration: { values: { key: "{{ vars.mode }}", n: 1, nested: [{ ok: true }] } }
        })
      ).toBe("admitted")
    }))

  it.effect("a password variable is never placed where it would be readable: anywhere in agent or configuration", () =>
    Effect.gen(function* () {
      expect(
        yield* problemsOf({
          variables: { pw: { type: "password" }, mode: { type: "string" } },
          agent: { backendId: "{{ vars.mode }}", initialWorkspaceFiles: { "SOUL.md": "token {{vars.pw}}" } },
          configuration: { values: { key: "{{ vars.pw }}", list: ["x", "a{{ vars.pw }}b"], ok: "{{ vars.mode }}" } }
        })
      ).toEqual([
        { code: "INVALID_VALUE", path: "/agent/initialWorkspaceFiles/SOUL.md" },
        { code: "INVALID_VALUE", path: "/configuration/values/key" },
        { code: "INVALID_VALUE", path: "/configuration/values/list/1" }
      ])
    }))

  it.effect("reports placeholder problems at the JSON pointer of the string", () =>
    Effect.gen(function* () {
      expect(
        yield* problemsOf({ variables: { a: { type: "string" } }, agent: { backendId: "{{ vars.a }}{{ vars.b }}" }, configuration: { values: { x: { y: ["{{ nope }}"] } } } })
      ).toEqual([
        { code: "INVALID_VALUE", path: "/agent/backendId" },
        { code: "INVALID_VALUE", path: "/configuration/values/x/y/0" }
      ])
    }))

  it.effect("password variables have no default; defaults have their variable's type; required variables have none", () =>
    Effect.gen(function* () {
      expect(yield* problemsOf({ variables: { p: { type: "password", default: "s3cret" } } })).toEqual([
        { code: "INVALID_VALUE", path: "/variables/p/default" }
      ])
      expect(yield* problemsOf({ variables: { b: { type: "boolean", default: "true" } } })).toEqual([
        { code: "INVALID_TYPE", path: "/variables/b/default" }
      ])
      expect(yield* problemsOf({ variables: { s: { type: "string", required: true, default: "x" } } })).toEqual([
        { code: "INVALID_VALUE", path: "/variables/s/default" }
      ])
    }))

  it.effect("the template itself is at most 1 MiB of JSON and 64 levels deep", () =>
    Effect.gen(function* () {
      expect(yield* problemsOf({ configuration: { values: { blob: "x".repeat(1024 * 1024) } } })).toEqual([{ code: "TOO_LONG", path: "" }])
      const nested = (levels: number): unknown => (levels === 0 ? 1 : { a: nested(levels - 1) })
      // template (1), configuration (2), values (3, the first of the nested objects): 62 reach level 64.
      expect(yield* problemsOf({ configuration: { values: nested(62) } })).toBe("admitted")
      expect(yield* problemsOf({ configuration: { values: nested(63) } })).toEqual([
        { code: "TOO_DEEP", path: `/configuration/values${"/a".repeat(62)}` }
      ])
    }))
})

describe("renderPreset", () => {
  const template = {
    variables: {
      name: { type: "string" },
      port: { type: "number" },
      debug: { type: "boolean", default: false },
      token: { type: "password" },
      region: { type: "string", default: "eu" },
      note: { type: "string", required: false }
    },
    agent: { executionMode: "dedicated", initialWorkspaceFiles: { "AGENTS.md": "You are {{ vars.name }} in {{vars.region}}." } },
    configuration: {
      values: {
        port: "{{ vars.port }}",
        debug: "{{vars.debug}}",
        url: "http://{{ vars.name }}:{{ vars.port }}/?debug={{ vars.debug }}",
        list: ["{{ vars.port }}", 3, null, { deep: "{{ vars.region }}" }]
      }
    }
  }
  const supplied = { name: "bot", port: 8080, token: "t0k3n" }

  it("a whole-string reference takes the typed value; inside a larger string its text; defaults fill omitted variables", () => {
    expect(rendered(template, supplied)).toEqual({
      agent: { executionMode: "dedicated", initialWorkspaceFiles: { "AGENTS.md": "You are bot in eu." } },
      configuration: {
        values: {
          port: 8080,
          debug: false,
          url: "http://bot:8080/?debug=false",
          list: [8080, 3, null, { deep: "eu" }]
        }
      }
    })
    expect(rendered(template, { ...supplied, debug: true, region: "us" }).configuration!.values).toMatchObject({ debug: true, url: "http://bot:8080/?debug=true" })
  })

  it("values are inserted as they are, never rendered again", () => {
    expect(rendered(template, { ...supplied, name: "{{ vars.token }}" }).agent.initialWorkspaceFiles).toEqual({
      "AGENTS.md": "You are {{ vars.token }} in eu."
    })
  })

  it("an empty template renders to empty settings and no Configuration", () => {
    expect(rendered({}, {})).toEqual({ agent: {}, configuration: undefined })
  })

  it("lists every variable problem: missing required, unknown, wrong type, non-finite numbers", () => {
    expect(problems(template, {})).toEqual([
      { code: "REQUIRED", path: "/variables/name" },
      { code: "REQUIRED", path: "/variables/port" },
      { code: "REQUIRED", path: "/variables/token" }
    ])
    expect(problems(template, { ...supplied, extra: 1, "a/b": 2 })).toEqual([
      { code: "UNKNOWN_FIELD", path: "/variables/extra" },
      { code: "UNKNOWN_FIELD", path: "/variables/a~1b" }
    ])
    expect(problems(template, { name: 5, port: "8080", debug: "yes", token: 1 })).toEqual([
      { code: "INVALID_TYPE", path: "/variables/name" },
      { code: "INVALID_TYPE", path: "/variables/port" },
      { code: "INVALID_TYPE", path: "/variables/debug" },
      { code: "INVALID_TYPE", path: "/variables/token" }
    ])
    expect(problems(template, { ...supplied, port: Number.POSITIVE_INFINITY })).toEqual([{ code: "INVALID_VALUE", path: "/variables/port" }])
    expect(problems(template, { ...supplied, port: Number.NaN })).toEqual([{ code: "INVALID_VALUE", path: "/variables/port" }])
  })

  it("an omitted optional variable without default is an error where it is referenced, and nothing where it is not", () => {
    expect(problems({ ...template, configuration: { values: { note: "note: {{ vars.note }}" } } }, supplied)).toEqual([
      { code: "REQUIRED", path: "/variables/note" }
    ])
    expect(problems({ ...template, configuration: { values: { a: "{{ vars.note }}", b: "{{ vars.note }}" } } }, supplied)).toEqual([
      { code: "REQUIRED", path: "/variables/note" }
    ])
    expect(rendered(template, supplied).configuration!.values).not.toHaveProperty("note")
    expect(rendered({ ...template, configuration: { values: { note: "{{ vars.note }}" } } }, { ...supplied, note: "n" }).configuration).toEqual({
      values: { note: "n" }
    })
  })

  it("checks the rendered settings as an Agent draft's: a value that does not fit is a problem at its pointer", () => {
    const settings = {
      variables: { mode: { type: "string" }, sa: { type: "string" }, n: { type: "number" } },
      agent: {
        executionMode: "{{ vars.mode }}",
        harnessAuth: { method: "provider_service_account", serviceAccountId: "{{ vars.sa }}" },
        pluginApprovers: [{ channel: "chat", id: "{{ vars.n }}" }]
      }
    }
    expect(problems(settings, { mode: "embedded", sa: "sa_nope", n: 1 })).toEqual([
      { code: "INVALID_FORMAT", path: "/agent/harnessAuth/serviceAccountId" },
      { code: "INVALID_TYPE", path: "/agent/pluginApprovers/0/id" }
    ])
    expect(problems(settings, { mode: "remote", sa: "sa_00000000-0000-4000-8000-000000000000", n: 1 })).toEqual([
      { code: "INVALID_VALUE", path: "/agent/executionMode" },
      { code: "INVALID_TYPE", path: "/agent/pluginApprovers/0/id" }
    ])
    expect(
      rendered({ ...settings, agent: { ...settings.agent, pluginApprovers: [{ channel: "chat", id: "U{{ vars.n }}" }] } }, {
        mode: "embedded",
        sa: "sa_00000000-0000-4000-8000-000000000000",
        n: 7
      }).agent
    ).toEqual({
      executionMode: "embedded",
      harnessAuth: { method: "provider_service_account", serviceAccountId: "sa_00000000-0000-4000-8000-000000000000" },
      pluginApprovers: [{ channel: "chat", id: "U7" }]
    })
  })

  it("a template stored before password placements were refused still never renders one into readable settings", () => {
    // Bypasses admission, as a Preset stored by an earlier version would.
    const result = renderPreset(
      { variables: { pw: { type: "password" } }, configuration: { values: { a: { b: "x{{ vars.pw }}" } } } } as unknown as PresetTemplate,
      { pw: "hunter2-secret" }
    )
    expect(Either.getLeft(result).pipe(Option.map((error) => error.problems))).toEqual(
      Option.some([{ code: "INVALID_VALUE", path: "/configuration/values/a/b" }])
    )
    expect(JSON.stringify(result)).not.toContain("hunter2")
  })

  it("a problem never carries a variable's value", () => {
    const result = render({ variables: { s: { type: "string" } }, agent: { executionMode: "{{ vars.s }}" } }, { s: "hunter2-secret" })
    expect(Either.isLeft(result)).toBe(true)
    expect(JSON.stringify(Either.getLeft(result))).not.toContain("hunter2")
  })
})
