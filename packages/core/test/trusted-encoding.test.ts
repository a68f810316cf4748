/**
 * Trusted encoding and decoding (schema/trusted.ts, issue 11 item 3). The fast paths must
 * answer exactly as Effect's interpreter does: the same bytes for every valid value (keys, their
 * order, excess keys dropped, optional keys, defaults, renamed keys, unions, records, tuples,
 * recursive values, effectful transformations, parse-option annotations), the same error when
 * Effect refuses, and the same JSON Schema. The one difference is on purpose: decoding our own
 * rows does not re-run refinements (id patterns).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Api from "@svc/core/api"
import { AgentRow } from "@svc/core/db"
import { AgentId, Envelope, ListEnvelope, RevisionId, Timestamp, trustedDecoder, trustedEncoding } from "@svc/core/schema"
import { Arbitrary, Effect, Either, FastCheck as fc, JSONSchema, Schema } from "effect"

/** Timestamps the wire form can carry (four-digit years), for generated values. */
const At = Timestamp.annotations({
  arbitrary: () => (fc) => fc.date({ min: new Date("1970-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true })
})

type JsonLike = string | number | boolean | null | ReadonlyArray<JsonLike> | { readonly [key: string]: JsonLike }
const JsonLike: Schema.Schema<JsonLike> = Schema.Union(
  Schema.String,
  Schema.Number,
  Schema.Boolean,
  Schema.Null,
  Schema.Array(Schema.suspend(() => JsonLike)),
  Schema.Record({ key: Schema.String, value: Schema.suspend(() => JsonLike) })
)

/** Every kind of node a response schema is made of. */
const Everything = Schema.Struct({
  id: AgentId,
  at: At,
  exact: Schema.optionalWith(Schema.String, { exact: true }),
  loose: Schema.optional(Schema.Number),
  defaulted: Schema.optionalWith(Schema.Number, { default: () => 7 }),
  renamed: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("renamed_on_the_wire")),
  nullable: Schema.NullOr(RevisionId),
  literal: Schema.Literal("a", "b"),
  tagged: Schema.Union(
    Schema.Struct({ kind: Schema.Literal("a"), when: At }),
    Schema.Struct({ kind: Schema.Literal("b"), count: Schema.Number })
  ),
  untagged: Schema.Union(Schema.Struct({ x: Schema.String }), Schema.Struct({ x: Schema.String, y: Schema.Number })),
  times: Schema.Record({ key: Schema.String, value: At }),
  mixed: Schema.Struct({ known: Schema.Number }, Schema.Record({ key: Schema.String, value: Schema.Number })),
  tuple: Schema.Tuple(Schema.String, Schema.optionalElement(At)),
  restAndTail: Schema.Tuple([Schema.String], At, Schema.Boolean),
  nested: Schema.Array(Schema.Struct({ id: AgentId, at: Schema.NullOr(At), tags: Schema.Array(Schema.String) })),
  json: JsonLike,
  strict: Schema.Struct({ a: Schema.String }).annotations({ parseOptions: { onExcessProperty: "error" } }),
  numberText: Schema.NumberFromString
})
type Everything = typeof Everything.Type

const outcome = <A, I>(schema: Schema.Schema<A, I>, value: A) =>
  Either.match(Schema.encodeEither(schema)(value), { onLeft: (error) => `error: ${error.message}`, onRight: (encoded) => JSON.stringify(encoded) })

/** The same, run as an Effect (effects allowed), as HttpApi encodes a response. */
const outcomeAsEffect = <A, I>(schema: Schema.Schema<A, I>, value: A) =>
  Effect.runSync(Effect.match(Schema.encode(schema)(value), { onFailure: (error) => `error: ${error.message}`, onSuccess: (encoded) => JSON.stringify(encoded) }))

/** `value` with an extra key in each of its structs, and one more entry in its struct with a record. */
const withExtras = (value: Everything) => ({
  ...value,
  extra: "x",
  tagged: { ...value.tagged, extra: "x" },
  untagged: { ...value.untagged, extra: "x" },
  nested: value.nested.map((item) => ({ ...item, extra: "x" })),
  mixed: { ...value.mixed, extra: 5 },
  strict: { ...value.strict, extra: "x" }
})

describe("trusted encoding", () => {
  it("writes exactly what Effect writes, for every generated value", () => {
    const trusted = trustedEncoding(Everything)
    fc.assert(
      fc.property(Arbitrary.make(Everything), (value) => {
        expect(outcome(trusted, value)).toBe(outcome(Everything, value))
        expect(outcomeAsEffect(trusted, value)).toBe(outcomeAsEffect(Everything, value))
      }),
      { numRuns: 300 }
    )
  })

  it("drops excess keys from structs and keeps them in records as Effect does, and fails where Effect fails", () => {
    const trusted = trustedEncoding(Everything)
    const samples = fc.sample(Arbitrary.make(Everything), 100)
    for (const value of samples) {
      const extra = withExtras(value)
      expect(outcome(trusted, extra)).toBe(outcome(Everything, extra))
      expect(outcomeAsEffect(trusted, extra)).toBe(outcomeAsEffect(Everything, extra))
      // The strict struct refuses its extra key: both answer with Effect's error.
      expect(outcome(trusted, extra)).toMatch(/^error: .*is unexpected/s)
    }
    // Without the strict member, the extras are dropped from structs and kept in the record.
    const lenient = Everything.omit("strict")
    for (const value of samples) {
      const { strict: _strict, ...rest } = withExtras(value)
      const encoded = outcome(trustedEncoding(lenient), rest)
      expect(encoded).toBe(outcome(lenient, rest))
      expect(JSON.parse(encoded)).not.toHaveProperty("extra")
      expect(JSON.parse(encoded).mixed).toHaveProperty("extra", 5)
    }
  })

  it("passes effectful transformations and non-default parse options to Effect", () => {
    const Upper = Schema.transformOrFail(Schema.String, Schema.String, {
      strict: true,
      decode: (s) => Effect.succeed(s.toLowerCase()),
      encode: (s) => Effect.succeed(s.toUpperCase())
    })
    const S = Schema.Struct({ name: Upper, at: At })
    const value = { name: "quiet", at: new Date("2026-01-02T03:04:05.006Z") }
    // Run as an Effect (as HttpApi does), Effect assigns an effectful property after the others;
    // run synchronously it forces it in place. The trusted schema answers as Effect does in each.
    expect(JSON.stringify(Effect.runSync(Schema.encode(trustedEncoding(S))(value)))).toBe('{"at":"2026-01-02T03:04:05.006Z","name":"QUIET"}')
    expect(JSON.stringify(Effect.runSync(Schema.encode(S)(value)))).toBe('{"at":"2026-01-02T03:04:05.006Z","name":"QUIET"}')
    expect(JSON.stringify(Schema.encodeSync(trustedEncoding(S))(value))).toBe('{"name":"QUIET","at":"2026-01-02T03:04:05.006Z"}')
    expect(JSON.stringify(Schema.encodeSync(S)(value))).toBe('{"name":"QUIET","at":"2026-01-02T03:04:05.006Z"}')
    const preserve = { onExcessProperty: "preserve" } as const
    const extra = { ...value, more: 1 }
    expect(Schema.encodeSync(trustedEncoding(S))(extra, preserve)).toEqual(Schema.encodeSync(S)(extra, preserve))
    expect(Schema.encodeSync(trustedEncoding(S))(extra, preserve)).toHaveProperty("more", 1)
  })

  it("does not re-check the Type side: a value Effect would refuse is written as it is", () => {
    // The trust: handlers' values are typed; Effect alone re-validates each id on the way out.
    const page = [{ id: "agt_not-checked", at: new Date("2026-01-02T03:04:05.006Z") }] as unknown as ReadonlyArray<{ id: AgentId; at: Date }>
    const Page = Schema.Array(Schema.Struct({ id: AgentId, at: Timestamp }))
    expect(outcome(Page, page)).toMatch(/^error: /)
    expect(outcome(trustedEncoding(Page), page)).toBe('[{"id":"agt_not-checked","at":"2026-01-02T03:04:05.006Z"}]')
  })

  it("has the same JSON Schema as the schema it wraps, for every list response", () => {
    const same = <A, I>(identifier: string, list: Schema.Schema<A, I>) => {
      const jsonSchema = <B, J>(schema: Schema.Schema<B, J>) => JSONSchema.make(schema, { target: "openApi3.1" })
      expect(jsonSchema(ListEnvelope(list, identifier)), identifier).toEqual(jsonSchema(Envelope(list, identifier)))
    }
    same("NamespaceListResponse", Api.NamespaceList)
    same("AgentListResponse", Schema.Array(Api.Agent))
    same("AgentRevisionListResponse", Schema.Array(Api.AgentRevision))
    same("ConfigurationListResponse", Api.ConfigurationList)
    same("SecretListResponse", Api.SecretList)
    same("PresetListResponse", Api.PresetList)
    same("ServiceAccountListResponse", Api.ServiceAccountList)
    same("CredentialSourceListResponse", Api.CredentialSourceList)
    same("RoleListResponse", Api.RoleList)
    same("AccessBindingListResponse", Api.AccessBindingList)
    same("ServicePrincipalListResponse", Api.ServicePrincipalList)
  })
})

const row = (overrides: Record<string, unknown> = {}) => ({
  id: AgentId.make(),
  namespace_id: "ns_00000000-0000-4000-8000-000000000000",
  name: "a",
  configuration_id: "cfg_00000000-0000-4000-8000-000000000000",
  service_principal_id: "sp_00000000-0000-4000-8000-000000000000",
  execution_mode: "embedded",
  backend_id: null,
  settings: { harnessAuth: { method: "runtime" }, nested: [1, { a: null }] },
  workspace_defaults_id: "wsd",
  status: "active",
  desired_runtime_state: "running",
  active_revision_id: RevisionId.make(),
  deletion_initiator: null,
  created_at: new Date("2026-01-02T03:04:05.006Z"),
  updated_at: new Date("2026-01-02T03:04:05.007Z"),
  svc_allowed: true,
  ...overrides
})

describe("trusted row decoding", () => {
  const Rows = Schema.Array(AgentRow)
  const trusted = trustedDecoder(Rows)
  const effect = Schema.decodeUnknown(Rows)
  const answer = (decode: typeof effect, rows: unknown) =>
    Effect.runSync(Effect.match(decode(rows), { onFailure: (error) => `error: ${error.message}`, onSuccess: (value) => value }))

  it("decodes our rows to what Effect decodes (columns in schema order, extra columns dropped)", () => {
    const rows = [row(), row({ backend_id: "b", active_revision_id: null, settings: {} })]
    const decoded = answer(trusted, rows)
    expect(decoded).toEqual(answer(effect, rows))
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(answer(effect, rows)))
    expect(decoded).not.toBe(rows)
  })

  it("still refuses, with Effect's error, what a column's type does not pin down", () => {
    const bad: ReadonlyArray<Record<string, unknown>> = [
      { name: 1 },
      { status: "archived" },
      { execution_mode: null },
      { backend_id: 3 },
      { created_at: "2026-01-02T03:04:05.006Z" },
      { settings: [] },
      { desired_runtime_state: undefined }
    ]
    for (const overrides of bad) {
      const rows = [row(), row(overrides)]
      const expected = answer(effect, rows)
      expect(expected, JSON.stringify(overrides)).toMatch(/^error: /)
      expect(answer(trusted, rows), JSON.stringify(overrides)).toBe(expected)
    }
    const { name: _name, ...missing } = row()
    expect(answer(trusted, [missing])).toBe(answer(effect, [missing]))
    expect(answer(trusted, { not: "rows" })).toBe(answer(effect, { not: "rows" }))
  })

  it("does not re-run refinements on values we wrote: an id's pattern is not checked again", () => {
    const rows = [row({ id: "agt_written-by-us" })]
    expect(answer(effect, rows)).toMatch(/^error: /)
    expect(answer(trusted, rows)).toEqual([expect.objectContaining({ id: "agt_written-by-us" })])
  })
})
