/**
 * Hostile request targets for the bad-input fuzz tests: query strings of the list endpoints
 * (keyset `limit`/`after`, and the audit API's `limit`, `cursor` and filters of DESIGN §18), path
 * parameter values (percent-escapes, dot segments, over-long, all of Unicode), and the raw HTTP
 * request that sends them byte for byte (fetch would normalise `..` and re-encode).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import fc from "fast-check"
import * as http from "node:http"
import { tableSnapshot } from "./fuzzBodies.js"

/** Every byte of `text` in UTF-8, as `%XX`. */
const escaped = (text: string) => Array.from(new TextEncoder().encode(text), (b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("")

/** Raw escapes of arbitrary byte sequences: invalid UTF-8, encoded surrogates, NUL. */
const rawBytes = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 6 })
  .map((bytes) => bytes.map((b) => `%${b.toString(16).padStart(2, "0")}`).join(""))

/** Text as a URL carries it: every code point escaped, raw byte escapes, broken escapes, long runs. */
export const urlText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 24 }).map(escaped),
  fc.string({ maxLength: 24 }).map(encodeURIComponent),
  rawBytes,
  fc.constantFrom("%", "%G1", "%2", "%%", "+", "%2B", "%20", "%00", "%ED%A0%80", "%C0%AE", "%EF%BF%BF", "..", "%2E%2E", "~", "@", ":", ";x", ","),
  fc.integer({ min: 200, max: 6000 }).map((n) => "a".repeat(n))
)

const hex36 = fc.string({ unit: fc.constantFrom(..."0123456789abcdef-"), minLength: 36, maxLength: 36 })

/** A page size as text: in range, out of range, not a number, oddly spelled. */
const limitText = fc.oneof(
  fc.integer({ min: -5, max: 1100 }).map(String),
  fc.double().map(String),
  fc.constantFrom("", "0", "1", "200", "201", "1000", "1001", "-0", "1e3", "1e-3", "0x10", "0b1", "1.0", "%201", "Infinity", "NaN", "9".repeat(400), "1%00", "1_0")
)

const pad = (n: number, width: number) => String(n).padStart(width, "0")

/** RFC 3339 date-times near and beyond every limit: year 0 and 9999, offsets of ±23:59, 30 February, 10 fraction digits. */
const instantText = fc.oneof(
  fc.record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 1969, 1970, 2038, 9999)),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 24 }),
    minute: fc.integer({ min: 0, max: 60 }),
    second: fc.integer({ min: 0, max: 60 }),
    fraction: fc.string({ unit: fc.constantFrom(..."0123456789"), maxLength: 11 }),
    offset: fc.oneof(fc.constantFrom("Z", "z", "+00:00", "-00:00", "+23:59", "-23:59", "+24:00"), fc.tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 })).map(([s, h, m]) => `${s}${pad(h, 2)}:${pad(m, 2)}`))
  }).map(({ year, month, day, hour, minute, second, fraction, offset }) =>
    encodeURIComponent(`${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}${fraction === "" ? "" : `.${fraction}`}${offset}`)),
  fc.date({ noInvalidDate: true }).map((d) => encodeURIComponent(d.toISOString())),
  urlText
)

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value) ?? "null").toString("base64url")

/** Audit cursors: well-formed base64url of arbitrary JSON, of almost-right `{at, id}` objects, and plain text. */
const cursorText = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map(base64url),
  fc.record({
    at: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string(), fc.constantFrom("9999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00.000000Z")),
    id: fc.oneof(fc.bigInt({ min: -1n, max: 10n ** 20n }).map(String), fc.string(), fc.integer())
  }, { requiredKeys: [] }).map(base64url),
  fc.string({ unit: fc.constantFrom(..."ABCabc019_-"), maxLength: 250 }),
  urlText
)

/** A key the endpoint does not know, or one objects give a meaning to. */
const strangeKey = fc.constantFrom("foo", "__proto__", "constructor", "limit[]", "Limit", "", "%00", "after%00", "cursor.x")

export interface ListEndpoint {
  readonly path: string
  readonly keys: Record<string, fc.Arbitrary<string>>
}

export const pageKeys = { limit: limitText, after: fc.oneof(fc.tuple(fc.constantFrom("agt_", "sec_", "a_", "ns_"), hex36).map(([p, h]) => `${p}${h}`), urlText) }

export const auditKeys = {
  limit: limitText,
  cursor: cursorText,
  since: instantText,
  until: instantText,
  actor: urlText,
  kind: urlText,
  resourceKind: urlText,
  resourceId: urlText,
  outcome: fc.oneof(fc.constantFrom("success", "failure", "denied", "SUCCESS", "success,denied"), urlText)
}

/** A query string of up to five parameters, repeated keys and unknown ones included, and the keys it names. */
export const queryOf = (endpoint: ListEndpoint) => {
  const known = Object.entries(endpoint.keys)
  const pair = fc.oneof(
    { arbitrary: fc.constantFrom(...known).chain(([key, value]) => value.map((v) => [key, v] as const)), weight: 4 },
    { arbitrary: fc.tuple(strangeKey, urlText), weight: 1 }
  )
  return fc.array(pair, { minLength: 1, maxLength: 5 }).map((pairs) => ({
    query: pairs.map(([key, value]) => `${key}=${value}`).join("&"),
    keys: pairs.map(([key]) => key)
  }))
}

/** What a hostile read or write could change: every resource table, work, and success audit. */
export const worldSnapshot = tableSnapshot((sql: SqlClient.SqlClient) =>
  Effect.map(
    Effect.all([
      "namespaces", "agents", "agent_revisions", "agent_provisioning", "configurations", "presets", "secrets",
      "service_accounts", "credential_sources", "roles", "access_bindings", "principals", "accounts", "account_methods",
      "service_keys", "idempotency_keys", "work_items"
    ].map((table) => sql<{ row: string }>`SELECT ${table} || ':' || count(*) || ':' || coalesce(md5(string_agg(row_to_json(t)::text, '' ORDER BY row_to_json(t)::text)), '') AS row FROM ${sql(table)} t`)),
    (parts) => parts.flat()
  ).pipe(Effect.zipWith(
    sql<{ row: string }>`SELECT 'audit:' || count(*) AS row FROM audit_events WHERE outcome = 'success'`,
    (a, b) => [...a, ...b]
  )))

/** What an answer's JSON may hold; the tests assert its exact shape. */
export interface AnswerBody {
  readonly data?: unknown
  readonly error?: { readonly code: string; readonly message: string; readonly details?: ReadonlyArray<{ readonly code: string; readonly path: string }> }
  readonly meta?: { readonly requestId?: string }
}

export interface RawAnswer {
  readonly status: number
  readonly text: string
  readonly body: AnswerBody | string | undefined
}

/** One request with `path` sent exactly as given (no dot-segment removal, no re-encoding). */
export const rawRequest = (baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const url = new URL(baseUrl)
    const request = http.request({ host: url.hostname, port: url.port, method, path, headers: body === undefined ? headers : { ...headers, "content-type": "application/json" } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let parsed: AnswerBody | string | undefined = undefined
        try {
          parsed = text.length > 0 ? JSON.parse(text) as AnswerBody : undefined
        } catch {
          parsed = text
        }
        resolve({ status: response.statusCode ?? 0, text, body: parsed })
      })
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(body)
  })
