/**
 * JSON-safe documents (SPEC 2.8 `values`): what survives a JSON round trip, and PostgreSQL's
 * jsonb, unchanged. A JSON parser turns `1e999` into Infinity; jsonb refuses the NUL character
 * and unpaired UTF-16 surrogates (`"\ud800"`) in strings and keys. Each is refused at admission
 * with a pointer to the offending value instead of failing in the database. Nesting depth is
 * bounded for every body by the JSON body middleware (TOO_DEEP).
 */
import { Schema } from "effect"
import { DETAIL_SEPARATOR } from "./detailCodes.js"

/** A UTF-16 surrogate without its pair cannot be encoded as UTF-8. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const unsafeText = (s: string) => s.includes("\u0000") || LONE_SURROGATE.test(s)

export interface UnsafeJson {
  readonly path: ReadonlyArray<string | number>
  readonly reason: string
}

/** The first value inside `value` that is not JSON-safe, or undefined. Iterative. */
export const firstUnsafeJson = (value: unknown): UnsafeJson | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string | number> }> = [{ value, path: [] }]
  while (stack.length > 0) {
    const { path, value: current } = stack.pop()!
    if (typeof current === "number") {
      if (!Number.isFinite(current)) return { path, reason: "must be a finite number" }
    } else if (typeof current === "string") {
      if (unsafeText(current)) return { path, reason: "must be Unicode text without NUL" }
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, path: [...path, index] }))
    } else if (typeof current === "object" && current !== null) {
      for (const [key, item] of Object.entries(current)) {
        if (unsafeText(key)) return { path: [...path, key], reason: "names must be Unicode text without NUL" }
        stack.push({ value: item, path: [...path, key] })
      }
    }
  }
  return undefined
}

/** Any JSON value: one named component (each bare `Schema.Unknown` repeats the same `$id` inline). */
export const JsonValue = Schema.Unknown.annotations({ identifier: "JsonValue", description: "any JSON value" })

/** A JSON object (not an array, not null) of JSON-safe values. */
export const JsonObject = Schema.Record({ key: Schema.String, value: JsonValue }).pipe(
  Schema.filter((document) => {
    const unsafe = firstUnsafeJson(document)
    return unsafe === undefined ? true : { path: unsafe.path, message: `INVALID_VALUE${DETAIL_SEPARATOR}${unsafe.reason}` }
  })
).annotations({ description: "A JSON object of JSON-safe values: finite numbers, text without NUL" })
export type JsonObject = typeof JsonObject.Type
