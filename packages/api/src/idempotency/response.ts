/**
 * What is kept of the first response under a key, and how a repeat gets it back
 * (docs/decisions/idempotency.md).
 */
import { HttpServerResponse } from "@effect/platform"
import { IDEMPOTENT_REPLAYED_HEADER } from "@svc/core/api"
import type { IdempotencyRow } from "@svc/core/db"
import { ResourceConflict } from "@svc/core/errors"

export const HEADER_POINTER = "/headers/idempotency-key"

/**
 * Successes and the 400s a request earns by itself are kept: a repeat would earn the same.
 * Anything else (401/403/404/409: state that may change; 5xx: nothing is known) is released, so
 * a retry acts again.
 */
export const isKept = (status: number): boolean => (status >= 200 && status < 300) || status === 400

/** The JSON of a response body, or null for an empty or non-JSON one. */
export const bodyJson = (response: HttpServerResponse.HttpServerResponse): string | null => {
  if (response.body._tag !== "Uint8Array") return null
  const text = new TextDecoder().decode(response.body.body)
  try {
    JSON.parse(text)
    return text
  } catch {
    return null
  }
}

const withRequestId = (body: unknown, requestId: string): unknown => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body
  const meta = (body as { meta?: unknown }).meta
  const rest = typeof meta === "object" && meta !== null ? meta : {}
  return { ...body, meta: { ...rest, requestId } }
}

export const withheldConflict = () =>
  new ResourceConflict({
    message: "The first request with this Idempotency-Key issued a secret that cannot be shown again; revoke it and issue another.",
    details: [{ code: "INVALID_VALUE", path: HEADER_POINTER }]
  })

/** The stored response with this request's id and the replay marker. */
export const replayOf = (row: IdempotencyRow, requestId: string): HttpServerResponse.HttpServerResponse => {
  const headers = { [IDEMPOTENT_REPLAYED_HEADER]: "true" }
  const status = row.status ?? 200
  return row.response_body === null
    ? HttpServerResponse.empty({ status, headers })
    : HttpServerResponse.unsafeJson(withRequestId(row.response_body, requestId), { status, headers })
}
