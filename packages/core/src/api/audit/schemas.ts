/**
 * The audit API's schemas (DESIGN §18, an extension of SPEC 0.1.0; docs/decisions/audit-api.md):
 * the query of a page, one entry, and the page envelope whose `meta` carries the next cursor.
 */
import { Effect, ParseResult, Schema } from "effect"
import { BoundedString, CurrentRequestId, detailMessage, Meta, PatternString, QueryInt, Timestamp, trustedEncoding, trustedType } from "../../schema/index.js"

export const AUDIT_PAGE_DEFAULT = 50
export const AUDIT_PAGE_MAX = 200

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/

/**
 * Whether an RFC 3339 string names a real instant: JavaScript would roll 30 February over into
 * March, and PostgreSQL refuses it (and year 0), so both are a wrong value here.
 */
export const isRealInstant = (s: string): boolean => {
  const match = RFC3339.exec(s)
  if (match === null) return false
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const offsetHours = match[8] === undefined ? 0 : Number(match[8])
  const offsetMinutes = match[9] === undefined ? 0 : Number(match[9])
  const date = new Date(Date.UTC(year, month - 1, day))
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day &&
    hour < 24 && minute < 60 && second < 60 && offsetHours < 24 && offsetMinutes < 60
}

/** An RFC 3339 date-time (any offset, any fraction), as the instant it names. */
export const Rfc3339 = Schema.String.pipe(
  Schema.maxLength(64, { message: detailMessage("TOO_LONG", "must be at most 64 characters") }),
  Schema.pattern(RFC3339, { message: detailMessage("INVALID_FORMAT", "must be an RFC 3339 date-time") }),
  Schema.filter(isRealInstant, { message: detailMessage("INVALID_VALUE", "is not a real date and time") })
).annotations({ jsonSchema: { type: "string", format: "date-time" } })

const Filter = (max: number) => BoundedString(1, max)

export const AuditOutcome = Schema.Literal("success", "failure", "denied")

const OUTCOMES: ReadonlyArray<string> = AuditOutcome.literals

/** An outcome filter: a string that is not one of the three is a wrong value, not a wrong type. */
const OutcomeParam = Schema.String.pipe(
  Schema.filter((s): s is typeof AuditOutcome.Type => OUTCOMES.includes(s), {
    message: detailMessage("INVALID_VALUE", "must be success, failure or denied")
  })
).annotations({ jsonSchema: { type: "string", enum: [...OUTCOMES] } })

export const AuditQuery = Schema.Struct({
  limit: Schema.optional(
    QueryInt(1, AUDIT_PAGE_MAX).annotations({ description: `Entries per page, 1-${AUDIT_PAGE_MAX} (default ${AUDIT_PAGE_DEFAULT})` })
  ),
  cursor: Schema.optional(
    PatternString(/^[A-Za-z0-9_-]+$/, 200).annotations({ description: "meta.nextCursor of the previous page (opaque)" })
  ),
  since: Schema.optional(Rfc3339.annotations({ description: "Entries at or after this instant" })),
  until: Schema.optional(Rfc3339.annotations({ description: "Entries before this instant" })),
  actor: Schema.optional(Filter(200).annotations({ description: "The acting principal's id" })),
  kind: Schema.optional(Filter(200).annotations({ description: "The event kind, e.g. secret.created" })),
  resourceKind: Schema.optional(Filter(100)),
  resourceId: Schema.optional(Filter(200)),
  outcome: Schema.optional(OutcomeParam)
})
export type AuditQuery = typeof AuditQuery.Type

const DetailValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null, Schema.Array(Schema.String))

export const AuditEntry = Schema.Struct({
  id: Schema.String.annotations({ description: "Ordered within the Installation; a decimal string" }),
  kind: Schema.String,
  at: Timestamp,
  actor: Schema.NullOr(Schema.String).annotations({ description: "The acting principal's id; null for the system" }),
  outcome: AuditOutcome,
  namespaceId: Schema.NullOr(Schema.String),
  resource: Schema.NullOr(Schema.Struct({ kind: Schema.String, id: Schema.String })),
  requestId: Schema.NullOr(Schema.String),
  details: Schema.Record({ key: Schema.String, value: DetailValue }).annotations({
    description: "Non-secret ids and facts of the event"
  })
}).annotations({ identifier: "AuditEntry" })
export type AuditEntry = typeof AuditEntry.Type

export interface AuditPage {
  readonly entries: ReadonlyArray<AuditEntry>
  readonly nextCursor: string | null
}

const PageMeta = Schema.Struct({
  ...Meta.fields,
  nextCursor: Schema.NullOr(Schema.String).annotations({ description: "The next page's cursor; null on the last page" })
}).annotations({ identifier: "AuditPageMeta" })

const AuditPageType = Schema.Struct({ entries: Schema.Array(AuditEntry), nextCursor: Schema.NullOr(Schema.String) })

/**
 * `{ data: [entries], meta: { requestId, nextCursor } }`; handlers return `AuditPage`, encoded
 * trusting its entries as every list page is (`ListEnvelope`).
 */
export const AuditPageResponse = Schema.transformOrFail(
  Schema.Struct({ data: trustedEncoding(Schema.Array(AuditEntry)), meta: PageMeta }).annotations({ identifier: "AuditPageResponse" }),
  trustedType(AuditPageType),
  {
    strict: true,
    decode: (page) => ParseResult.succeed({ entries: page.data, nextCursor: page.meta.nextCursor }),
    encode: (page) =>
      Effect.map(CurrentRequestId, (requestId) => ({
        data: page.entries,
        meta: { requestId, nextCursor: page.nextCursor }
      }))
  }
)
