/**
 * The bodies of the bad-input fuzz test (bad-input-fuzz.test.ts): for a route's fields, bodies
 * invalid by construction and bodies drawn from the whole JSON value space inside the right shape.
 */
import { SqlClient } from "@effect/sql"
import { NamespaceId, SecretId } from "@svc/core/schema"
import { Effect } from "effect"
import fc from "fast-check"

export const SEED = 20261122
export const RUNS = 60

/** `nullableObject`: an object (or array of objects) where `null` is also valid, so neither null nor [] is a wrong type. */
export type FieldKind =
  | "name"
  | "secretValue"
  | "object"
  | "nullableObject"
  | "enum"
  | "bindings"
  | "template"
  | "reference"
  /** `repositoryBindings`: up to 16 `{repositoryRef, profile?}` with unique references. */
  | "repositoryList"
  /** `repositoryAccess`: `{defaultProfile, repositories}`. */
  | "repositoryAccess"

/**
 * A field with rules of its own (support/fuzzFields.ts): values of the wrong type, values that
 * break one of its rules, and values drawn from its shape.
 */
export interface NestedField {
  readonly structured: boolean
  readonly wrongType: fc.Arbitrary<unknown>
  /** Values that break one rule each, every one of which the test also sends on its own. */
  readonly cases: ReadonlyArray<unknown>
  /** `cases`, and generated values that break one rule each. */
  readonly invalid: fc.Arbitrary<unknown>
  readonly shaped: fc.Arbitrary<unknown>
}

/** Kinds whose value is a JSON object or array rather than a string. */
const STRUCTURED: ReadonlyArray<FieldKind> = ["object", "nullableObject", "bindings", "template", "repositoryList", "repositoryAccess"]
const structured = (kind: FieldKind | NestedField) => typeof kind === "object" ? kind.structured : STRUCTURED.includes(kind)

export interface Target {
  readonly route: string
  readonly method: "POST" | "PATCH"
  readonly path: string
  /** A valid body; mutations start from it. */
  readonly valid: Record<string, unknown>
  readonly fields: Record<string, FieldKind | NestedField>
  readonly required: ReadonlyArray<string>
  /** What the route may write: compared before and after each refused request. */
  readonly snapshot: Effect.Effect<string, unknown, SqlClient.SqlClient>
  /** `false` when every shaped body has a specified 5xx answer (the test says why). */
  readonly shapedBodies?: false
  /** `false` when a repeated valid value has effects of its own (sign-in throttling counts failures per email). */
  readonly shapedKeepsValid?: false
  /** Runs of each property, when fewer than `RUNS` (a route that hashes a password per request). */
  readonly runs?: number
  /** The caller this route is called as, instead of the test's default caller. */
  readonly headers?: Record<string, string>
}

/** Values that are not of the field's kind. */
const wrongType = (kind: FieldKind | NestedField): fc.Arbitrary<unknown> => {
  if (typeof kind === "object") return kind.wrongType
  const scalars = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null))
  switch (kind) {
    case "name":
    case "secretValue":
    case "enum":
    case "reference":
      return fc.oneof(scalars, fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }))
    case "object":
    case "bindings":
    case "template":
    case "repositoryAccess":
      return fc.oneof(scalars, fc.string(), fc.array(fc.jsonValue(), { maxLength: 3 }))
    case "repositoryList":
      return fc.oneof(scalars, fc.string(), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 2 }))
    case "nullableObject":
      return fc.oneof(fc.integer(), fc.boolean(), fc.string(), fc.array(fc.integer(), { minLength: 1, maxLength: 3 }))
  }
}

const CONTROL = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code))
const UUID = fc.uuid({ version: 4 })
const WRONG_PREFIXES = ["cfg_", "ns_", "agt_", "rev_", "sa_", "pre_", "SEC_", "sec-", ""]

/** One mutation that makes any body of the target invalid. */
const invalidMutation = (target: Target): fc.Arbitrary<(body: Record<string, unknown>) => unknown> => {
  const mutations: Array<fc.Arbitrary<(body: Record<string, unknown>) => unknown>> = [
    // Unknown field.
    fc.string({ minLength: 1, maxLength: 40 })
      .filter((key) => !(key in target.fields))
      .chain((key) => fc.jsonValue().map((value) => (body: Record<string, unknown>) => ({ ...body, [key]: value }))),
    // Not an object at all.
    fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null)).map((value) => () => value)
  ]
  if (Object.keys(target.fields).length > 0) {
    const field = fc.constantFrom(...Object.keys(target.fields))
    // Wrong type.
    mutations.push(field.chain((name) => wrongType(target.fields[name]!).map((value) => (body: Record<string, unknown>) => ({ ...body, [name]: value }))))
    // Deep nesting, below or beside the fields.
    mutations.push(fc.tuple(field, fc.integer({ min: 65, max: 400 })).map(([name, depth]) => (body: Record<string, unknown>) => {
      let deep: unknown = body[name] ?? 1
      for (let i = 0; i < depth; i++) deep = i % 2 === 0 ? { d: deep } : [deep]
      return { ...body, [name]: deep }
    }))
  }
  const nested = Object.entries(target.fields).flatMap(([name, kind]) => typeof kind === "object" ? [[name, kind] as const] : [])
  if (nested.length > 0) {
    // A value breaking one rule of a field with rules of its own.
    mutations.push(fc.constantFrom(...nested).chain(([name, kind]) =>
      kind.invalid.map((value) => (body: Record<string, unknown>) => ({ ...body, [name]: value }))))
  }
  if (target.required.length > 0) {
    mutations.push(fc.constantFrom(...target.required).map((name) => (body: Record<string, unknown>) => {
      const { [name]: _removed, ...rest } = body
      return rest
    }))
  }
  const named = Object.entries(target.fields).filter(([, kind]) => kind === "name").map(([name]) => name)
  if (named.length > 0) {
    // Control characters and over-long names.
    mutations.push(fc.tuple(fc.constantFrom(...named), fc.string({ maxLength: 20 }), CONTROL, fc.string({ maxLength: 20 }))
      .map(([name, a, c, b]) => (body: Record<string, unknown>) => ({ ...body, [name]: `x${a}${c}${b}` })))
    mutations.push(fc.tuple(fc.constantFrom(...named), fc.integer({ min: 201, max: 100_000 }))
      .map(([name, length]) => (body: Record<string, unknown>) => ({ ...body, [name]: "n".repeat(length) })))
  }
  const texts = Object.entries(target.fields).filter(([, kind]) => !structured(kind)).map(([name]) => name)
  if (texts.length > 0) {
    // NUL anywhere in a string field.
    mutations.push(fc.tuple(fc.constantFrom(...texts), fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }))
      .map(([name, a, b]) => (body: Record<string, unknown>) => ({ ...body, [name]: `${a}\u0000${b}` })))
  }
  const maps = Object.entries(target.fields).filter(([, kind]) => structured(kind) && kind !== "repositoryList").map(([name]) => name)
  if (maps.length > 0) {
    // A name JavaScript objects give a meaning to, as a map key (an own key, as JSON.parse makes it).
    mutations.push(fc.tuple(fc.constantFrom(...maps), fc.constantFrom("__proto__", "constructor", "prototype"), fc.jsonValue())
      .map(([name, key, value]) => (body: Record<string, unknown>) => {
        const map: Record<string, unknown> = {}
        Object.defineProperty(map, key, { value, enumerable: true, configurable: true, writable: true })
        return { ...body, [name]: map }
      }))
  }
  if (Object.values(target.fields).includes("secretValue")) {
    mutations.push(fc.integer({ min: 65_537, max: 300_000 }).map((length) => (body: Record<string, unknown>) => ({ ...body, value: "v".repeat(length) })))
  }
  if (Object.values(target.fields).includes("bindings")) {
    // A binding whose Secret id carries the wrong prefix.
    mutations.push(fc.tuple(fc.constantFrom(...WRONG_PREFIXES), UUID).map(([prefix, uuid]) => (body: Record<string, unknown>) => ({
      ...body,
      secretBindings: { SOME_KEY: { source: { kind: "secret", namespaceId: NamespaceId.make(), id: `${prefix}${uuid}` } } }
    })))
  }
  const lists = Object.entries(target.fields).filter(([, kind]) => kind === "repositoryList").map(([name]) => name)
  if (lists.length > 0) {
    // Repository bindings breaking one rule each: 17 of them, a repeated or malformed reference, an unknown field.
    const binding = (repositoryRef: string, extra: Record<string, unknown> = {}) => ({ repositoryRef, ...extra })
    mutations.push(fc.tuple(fc.constantFrom(...lists), fc.constantFrom<ReadonlyArray<unknown>>(
      Array.from({ length: 17 }, (_, i) => binding(`repo-${i}`)),
      [binding("widgets"), binding("widgets", { profile: "git-read" })],
      [binding("-widgets")],
      [binding("r".repeat(129))],
      [binding("widgets", { profile: "git write" })],
      [binding("widgets", { owner: "acme" })],
      [{ profile: "git-read" }]
    )).map(([name, list]) => (body: Record<string, unknown>) => ({ ...body, [name]: list })))
  }
  return fc.oneof(...mutations)
}

/** A body invalid by construction: one sure mutation, maybe followed by more. */
export const invalidBody = (target: Target): fc.Arbitrary<string> =>
  fc.tuple(fc.array(invalidMutation(target), { minLength: 1, maxLength: 3 }), fc.boolean()).map(([mutations, broken]) => {
    let body: unknown = target.valid
    for (const mutate of mutations) body = mutate(typeof body === "object" && body !== null && !Array.isArray(body) ? body as Record<string, unknown> : {})
    const text = JSON.stringify(body)
    // Sometimes: the same body cut short, which is not JSON at all.
    return broken ? text.slice(0, Math.max(1, Math.floor(text.length / 2))) : text
  })

/** Any UTF-16 code unit, with the ones storage layers choke on (NUL, unpaired surrogates) made likely. */
const codeUnit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  fc.constantFrom("\u0000", "\ud800", "\udfff", "\u2028", "\u007f", "é", "a", "_", " ")
)
export const anyText = fc.oneof(fc.string({ unit: codeUnit, maxLength: 40 }), fc.string({ maxLength: 40 }))
export const anyJson = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    anyText,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(anyText, tie("value"), { maxKeys: 3 })
  )
})).value

/** Anything JSON inside the right shape: any Unicode (unpaired surrogates included), any number. */
export const shapedBody = (target: Target): fc.Arbitrary<string> => {
  const reference = fc.oneof(anyText, fc.constantFrom("widgets", "git-read", "a".repeat(128)))
  const repositoryList = fc.array(fc.record({ repositoryRef: reference, profile: reference }, { requiredKeys: ["repositoryRef"] }), { maxLength: 3 })
  const fieldValue = (kind: FieldKind | NestedField): fc.Arbitrary<unknown> => {
    if (typeof kind === "object") return kind.shaped
    switch (kind) {
      case "name":
      case "secretValue":
        return anyText
      case "reference":
        return fc.oneof(anyText, fc.tuple(fc.constantFrom(...WRONG_PREFIXES, "cfg_"), UUID).map(([prefix, uuid]) => `${prefix}${uuid}`))
      case "enum":
        return fc.constantFrom("agent", "AGENT", "", "agent\u0000")
      case "object":
      case "nullableObject":
        return fc.dictionary(anyText, anyJson, { maxKeys: 4 })
      case "bindings":
        return fc.dictionary(anyText, fc.constant({ source: { kind: "secret", namespaceId: NamespaceId.make(), id: SecretId.make() } }), { maxKeys: 2 })
      case "repositoryList":
        return repositoryList
      case "repositoryAccess":
        return fc.record({ defaultProfile: anyText, repositories: repositoryList }, { requiredKeys: [] })
      case "template":
        return fc.record({
          variables: fc.dictionary(anyText, fc.record({
            type: fc.constantFrom("string", "number", "boolean", "password", "text"),
            description: anyText,
            default: anyJson
          }, { requiredKeys: ["type"] }), { maxKeys: 2 }),
          // A string holding a reference is checked only when rendered; what else it holds is not.
          agent: fc.record({ backendId: fc.oneof(anyText, anyText.map((text) => `{{ vars.who }}${text}`)) }, { requiredKeys: [] }),
          configuration: fc.record({ values: fc.dictionary(anyText, anyJson, { maxKeys: 3 }) })
        }, { requiredKeys: [] })
    }
  }
  // A field keeps its valid value one time in three, so the other fields' values reach the handler.
  const fields = Object.fromEntries(Object.entries(target.fields).map(([name, kind]) =>
    [name, name in target.valid && target.shapedKeepsValid !== false ? fc.oneof({ arbitrary: fieldValue(kind), weight: 2 }, { arbitrary: fc.constant(target.valid[name]), weight: 1 }) : fieldValue(kind)]))
  return fc.record(fields, { requiredKeys: [...target.required] }).map((body) =>
    // JSON.stringify writes Infinity and NaN as null; write them as a parser would read 1e999.
    JSON.stringify(body, (_key, value) => (typeof value === "number" && !Number.isFinite(value) ? 1e308 * 10 : value))
      .replace(/1e\+?309|Infinity/g, "1e999")
  )
}

export const tableSnapshot = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ row: string }>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(query(sql), (rows) => rows.map((r) => r.row).join("\n")))
