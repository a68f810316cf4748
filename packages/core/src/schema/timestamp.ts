import { Schema } from "effect"
import { detailMessage } from "./detailCodes.js"

const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** The wire form: ISO 8601 UTC with milliseconds, `YYYY-MM-DDTHH:MM:SS.mmmZ` (SPEC 2.1). */
export const TimestampString = Schema.String.pipe(
  Schema.pattern(TIMESTAMP_PATTERN, { message: detailMessage("INVALID_FORMAT") }),
  Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: detailMessage("INVALID_VALUE") })
).annotations({
  identifier: "TimestampString",
  description: "ISO 8601 UTC timestamp with milliseconds, YYYY-MM-DDTHH:MM:SS.mmmZ",
  jsonSchema: { type: "string", format: "date-time", pattern: TIMESTAMP_PATTERN.source }
})

/** A `Date` in memory, a millisecond UTC timestamp on the wire. */
export const Timestamp = Schema.transform(TimestampString, Schema.ValidDateFromSelf, {
  strict: true,
  decode: (s) => new Date(s),
  encode: (d) => d.toISOString()
}).annotations({ identifier: "Timestamp" })
