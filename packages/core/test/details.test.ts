import { describe, expect, it } from "@effect/vitest"
import { detailsFromParseError, jsonPointer } from "@svc/core/errors"
import { AgentFieldRules, BoundedInt, BoundedString, OneOf, NamespaceId, PatternString, RequestBody, ResourceName } from "@svc/core/schema"
import { Effect, Either, Schema } from "effect"

const Body = RequestBody({
  name: BoundedString(1, 5),
  slug: PatternString(/^[a-z]+$/, 10),
  size: BoundedInt(1, 10),
  mode: OneOf("embedded", "dedicated"),
  namespaceId: Schema.optional(NamespaceId),
  tags: Schema.optional(Schema.Array(BoundedString(1, 3))),
  nested: Schema.optional(RequestBody({ "a/b~c": Schema.String }))
})

const detailsOf = (input: unknown) =>
  Effect.gen(function* () {
    const result = Schema.decodeUnknownEither(Body)(input)
    if (Either.isRight(result)) return []
    return yield* detailsFromParseError(result.left)
  })

const valid = { name: "ok", slug: "abc", size: 3, mode: "embedded" }

describe("parse failures as details[]", () => {
  it.effect("accepts a valid body", () => Effect.map(detailsOf(valid), (d) => expect(d).toEqual([])))

  it.effect("reports every problem with its code and JSON Pointer", () =>
    Effect.gen(function* () {
      const details = yield* detailsOf({
        name: "toolong",
        slug: "ABC",
        size: 11,
        mode: "other",
        namespaceId: "ns_nope",
        tags: ["ok", 7, "long"],
        extra: true
      })
      expect(details).toEqual(
        expect.arrayContaining([
          { code: "TOO_LONG", path: "/name" },
          { code: "INVALID_FORMAT", path: "/slug" },
          { code: "INVALID_VALUE", path: "/size" },
          { code: "INVALID_VALUE", path: "/mode" },
          { code: "INVALID_FORMAT", path: "/namespaceId" },
          { code: "INVALID_TYPE", path: "/tags/1" },
          { code: "TOO_LONG", path: "/tags/2" },
          { code: "UNKNOWN_FIELD", path: "/extra" }
        ])
      )
      expect(details).toHaveLength(8)
    }))

  it.effect("reports missing fields as REQUIRED and wrong types as INVALID_TYPE", () =>
    Effect.gen(function* () {
      const missing = yield* detailsOf({ slug: "abc", size: 3, mode: "embedded" })
      expect(missing).toEqual([{ code: "REQUIRED", path: "/name" }])
      expect(yield* detailsOf({ ...valid, size: "3" })).toEqual([{ code: "INVALID_TYPE", path: "/size" }])
      expect(yield* detailsOf("not an object")).toEqual([{ code: "INVALID_TYPE", path: "" }])
    }))

  it.effect("counts characters (code points), as SPEC and JSON Schema do, not UTF-16 code units", () =>
    Effect.gen(function* () {
      const emoji = "\u{1F600}"
      // Five characters (ten code units) fit BoundedString(1, 5); six do not.
      expect(yield* detailsOf({ ...valid, name: emoji.repeat(5), slug: "abcdefghij" })).toEqual([])
      expect(yield* detailsOf({ ...valid, name: emoji.repeat(6) })).toEqual([{ code: "TOO_LONG", path: "/name" }])
      expect(yield* detailsOf({ ...valid, tags: [emoji.repeat(3)] })).toEqual([])
      const AtLeast = RequestBody({ word: BoundedString(3, 10) })
      const tooShort = Schema.decodeUnknownEither(AtLeast)({ word: emoji.repeat(2) })
      expect(Either.isLeft(tooShort) ? yield* detailsFromParseError(tooShort.left) : []).toEqual([
        { code: "INVALID_VALUE", path: "/word" }
      ])
    }))

  it.effect("SPEC 8's character limits elsewhere count characters too: names (1-200), initial workspace files (16384)", () =>
    Effect.gen(function* () {
      const emoji = "\u{1F600}"
      const problems = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
        Either.match(Schema.decodeUnknownEither(schema)(input), { onLeft: detailsFromParseError, onRight: () => Effect.succeed([]) })
      const Named = RequestBody({ name: ResourceName })
      expect(yield* problems(Named, { name: emoji.repeat(200) })).toEqual([])
      expect(yield* problems(Named, { name: emoji.repeat(201) })).toEqual([{ code: "TOO_LONG", path: "/name" }])
      const files = AgentFieldRules.InitialWorkspaceFiles
      expect(yield* problems(files, { "AGENTS.md": emoji.repeat(16384) })).toEqual([])
      expect(yield* problems(files, { "AGENTS.md": emoji.repeat(16385) })).toEqual([{ code: "TOO_LONG", path: "/AGENTS.md" }])
    }))

  it.effect("escapes ~ and / in pointer segments (RFC 6901)", () =>
    Effect.map(detailsOf({ ...valid, nested: { "a/b~c": 1 } }), (details) =>
      expect(details).toEqual([{ code: "INVALID_TYPE", path: "/nested/a~1b~0c" }])))

  it("keeps at most 32 details and paths of at most 512 characters", () => {
    const Many = RequestBody(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, Schema.String])))
    const result = Schema.decodeUnknownEither(Many)({})
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(Effect.runSync(detailsFromParseError(result.left))).toHaveLength(32)
    }
    const pointer = jsonPointer(Array.from({ length: 100 }, () => "abcdefghij"))
    expect(pointer.length).toBeLessThanOrEqual(512)
    expect(pointer).toBe("/abcdefghij".repeat(46))
  })
})
