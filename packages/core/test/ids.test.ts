import { describe, expect, it } from "@effect/vitest"
import { Ids, IdPrefixes, NamespaceId, RequestId, Timestamp, UUID_V4 } from "@svc/core/schema"
import { Either, Schema } from "effect"

describe("identifiers", () => {
  it("cover every SPEC 2.1 prefix", () => {
    const prefixes = Object.values(Ids).map((id) => id.prefix)
    for (const prefix of ["ns", "agt", "cfg", "rev", "cs", "sec", "sa", "req"]) {
      expect(prefixes).toContain(prefix)
    }
    expect(Object.keys(Ids).sort()).toEqual(Object.keys(IdPrefixes).sort())
  })

  it("are the prefix plus a lowercase UUIDv4, and validate", () => {
    const uuid = new RegExp(`^${UUID_V4}$`)
    for (const [kind, schema] of Object.entries(Ids)) {
      const id = schema.make()
      expect(id.startsWith(`${schema.prefix}_`), kind).toBe(true)
      expect(uuid.test(id.slice(schema.prefix.length + 1)), kind).toBe(true)
      expect(schema.isValid(id)).toBe(true)
      expect(Either.isRight(Schema.decodeUnknownEither(schema as unknown as Schema.Schema<string, string>)(id))).toBe(true)
    }
  })

  it("reject wrong prefixes, upper case, other UUID versions and junk", () => {
    const good = NamespaceId.make()
    const bad = [
      good.toUpperCase(),
      good.replace("ns_", "agt_"),
      "ns_00000000-0000-1000-8000-000000000000",
      "ns_00000000-0000-4000-7000-000000000000",
      `${good}x`,
      ` ${good}`,
      "ns_",
      "",
      42
    ]
    for (const value of bad) {
      expect(NamespaceId.isValid(value), String(value)).toBe(false)
      expect(Either.isLeft(Schema.decodeUnknownEither(NamespaceId)(value)), String(value)).toBe(true)
    }
    expect(RequestId.isValid(RequestId.make())).toBe(true)
  })

  it("make(value) brands that value after checking it; it never swaps in a fresh id", () => {
    const existing = NamespaceId.make()
    expect(NamespaceId.make(existing)).toBe(existing)
    expect(() => NamespaceId.make("ns_not-a-uuid")).toThrow(/ns_ followed by a lowercase UUIDv4|INVALID_FORMAT|Expected/)
    expect(() => NamespaceId.make(existing.replace("ns_", "agt_"))).toThrow()
  })
})

describe("timestamps", () => {
  it("encode as ISO 8601 UTC with milliseconds", () => {
    expect(Schema.encodeSync(Timestamp)(new Date(Date.UTC(2026, 10, 22, 7, 5, 3, 9)))).toBe(
      "2026-11-22T07:05:03.009Z"
    )
  })

  it("decode only the exact millisecond form", () => {
    expect(Schema.decodeUnknownSync(Timestamp)("2026-11-22T07:05:03.009Z").getTime()).toBe(
      Date.UTC(2026, 10, 22, 7, 5, 3, 9)
    )
    for (const value of [
      "2026-11-22T07:05:03Z",
      "2026-11-22T07:05:03.009+00:00",
      "2026-11-22 07:05:03.009Z",
      "2026-13-22T07:05:03.009Z",
      1764000000000
    ]) {
      expect(Either.isLeft(Schema.decodeUnknownEither(Timestamp)(value)), String(value)).toBe(true)
    }
  })
})
