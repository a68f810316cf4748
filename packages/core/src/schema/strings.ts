import { Schema } from "effect"
import { detailMessage } from "./detailCodes.js"
import { LONE_SURROGATE } from "./json.js"

/**
 * How many characters a string has as SPEC and JSON Schema count them: code points, not the
 * UTF-16 code units of `length` (an emoji is one character, two code units). PostgreSQL's
 * `char_length` counts the same way.
 */
export const charLength = (s: string): number => {
  let count = 0
  for (const _ of s) count++
  return count
}

/** `Schema.minLength`/`maxLength` (same annotations and JSON Schema) counting characters. */
export const minChars = (min: number, message = `must be at least ${min} characters`) =>
  Schema.filter<Schema.Schema<string>>((s) => s.length >= 2 * min || charLength(s) >= min, {
    schemaId: Schema.MinLengthSchemaId,
    title: `minLength(${min})`,
    description: `a string at least ${min} character(s) long`,
    jsonSchema: { minLength: min },
    message: detailMessage("INVALID_VALUE", message)
  })
export const maxChars = (max: number, message = `must be at most ${max} characters`) =>
  Schema.filter<Schema.Schema<string>>((s) => s.length <= max || charLength(s) <= max, {
    schemaId: Schema.MaxLengthSchemaId,
    title: `maxLength(${max})`,
    description: `a string at most ${max} character(s) long`,
    jsonSchema: { maxLength: max },
    message: detailMessage("TOO_LONG", message)
  })

/**
 * A string of `min`-`max` characters. Too long reports TOO_LONG; too short INVALID_VALUE (an
 * empty required string is a value error, not a missing field).
 */
export const BoundedString = (min: number, max: number) => Schema.String.pipe(minChars(min), maxChars(max))

/**
 * Text PostgreSQL can hold in jsonb: no unpaired UTF-16 surrogate (`"\ud800"`), which JSON
 * carries but jsonb refuses (INVALID_VALUE, instead of a failed statement).
 */
export const wellFormedText = Schema.filter<Schema.Schema<string>>((s) => !LONE_SURROGATE.test(s), {
  message: detailMessage("INVALID_VALUE", "must not contain unpaired surrogates")
})

/** A string that must match `pattern` (INVALID_FORMAT), within `max` characters (TOO_LONG). */
export const PatternString = (pattern: RegExp, max: number) =>
  Schema.String.pipe(maxChars(max), Schema.pattern(pattern, { message: detailMessage("INVALID_FORMAT") }))

/** A DNS-1123 label, the name Kubernetes gives a namespace: lowercase alphanumerics and '-', alphanumeric at both ends. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
export const DNS_LABEL_MAX = 63
export const isDnsLabel = (s: string): boolean => s.length <= DNS_LABEL_MAX && DNS_LABEL.test(s)

/** The cluster's own namespaces (stated as is in the OpenAPI document). */
export const RESERVED_NAMESPACE = /^(default$|kube-)/

/**
 * A Kubernetes namespace a Namespace may bind as its `existingNamespace` (SPEC 4.2): a DNS-1123
 * label that is not the cluster's own, `default` or any `kube-*` (kube-system, kube-public,
 * kube-node-lease and whatever Kubernetes adds under that prefix), which a tenant's quota,
 * policies and workloads must never land in. The API's body check and the `kubernetes` driver
 * both ask this.
 */
export const isBindableNamespaceName = (s: string): boolean => isDnsLabel(s) && !RESERVED_NAMESPACE.test(s)

/** An integer in `[min, max]` (INVALID_VALUE outside, INVALID_TYPE for non-numbers). */
export const BoundedInt = (min: number, max: number) =>
  Schema.Number.pipe(
    Schema.int({ message: detailMessage("INVALID_VALUE", "must be an integer") }),
    Schema.between(min, max, { message: detailMessage("INVALID_VALUE", `must be between ${min} and ${max}`) })
  )

/**
 * An integer in `[min, max]` written in a query string: plain decimal digits, no sign, no leading
 * zero. `Schema.NumberFromString` reads with `Number()`, which also takes "0x10", " 1", "1e3" and
 * "1.0", spellings no client means; they are INVALID_VALUE here, like a number out of range.
 */
export const QueryInt = (min: number, max: number) =>
  Schema.compose(
    Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]{0,15})$/, { message: detailMessage("INVALID_VALUE", "must be a decimal integer") })),
    Schema.NumberFromString
  ).pipe(Schema.between(min, max, { message: detailMessage("INVALID_VALUE", `must be between ${min} and ${max}`) }))

/**
 * One of a fixed set of strings (INVALID_VALUE otherwise). A refined string rather than a
 * literal union, because a union's failure is reported once per member, not as one value error.
 */
export const OneOf = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.String.pipe(
    Schema.filter((s): s is L[number] => values.includes(s), {
      message: detailMessage("INVALID_VALUE", `must be one of ${values.join(", ")}`),
      jsonSchema: { enum: values }
    })
  )

/**
 * A JSON request body schema: unknown fields are rejected (UNKNOWN_FIELD) and every problem is
 * reported, not only the first.
 */
export const RequestBody = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })

/** 1-200 characters, no leading or trailing whitespace, no control characters (SPEC 2.4 names). */
export const ResourceName = Schema.String.pipe(
  minChars(1, "must be at least 1 character"),
  maxChars(200),
  Schema.filter((s) => s.trim() === s && !/[\u0000-\u001f\u007f-\u009f]/.test(s) && !LONE_SURROGATE.test(s), {
    message: detailMessage("INVALID_FORMAT", "no leading or trailing whitespace, control characters or unpaired surrogates")
  })
)
