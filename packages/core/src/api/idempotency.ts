/**
 * Idempotent writes (DESIGN §18, an extension of SPEC 0.1.0; docs/decisions/idempotency.md):
 * the middleware tags an endpoint opts into, and the OpenAPI documentation of the
 * `Idempotency-Key` header. The implementation lives with the server (`@svc/api` idempotency).
 */
import { type HttpApiEndpoint, HttpApiMiddleware, OpenApi } from "@effect/platform"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import { Schema } from "effect"
import { ErrorWire } from "../errors/index.js"

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key"
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed"

/** 1-255 visible ASCII characters (0x21-0x7E). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7E]{1,255}$/

const failure = Schema.Union(ErrorWire.INVALID_REQUEST, ErrorWire.RESOURCE_CONFLICT)

/**
 * A repeat of the first request with the same key replays its stored response. Declared on an
 * endpoint before `JsonBody` and `Authentication` (so it runs after both: it needs the caller).
 */
export class Idempotency extends HttpApiMiddleware.Tag<Idempotency>()("Idempotency", { failure }) {}

/**
 * The same for an endpoint whose success response carries a secret shown once (a service
 * key): the response is never stored, so a repeat acts no second time and answers 409.
 */
export class IdempotencyWithheld extends HttpApiMiddleware.Tag<IdempotencyWithheld>()("IdempotencyWithheld", {
  failure
}) {}

const headerParameter = (withheld: boolean) => ({
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: withheld
    ? "Extension of SPEC 0.1.0: a repeat with the same key and body within 24 h does not act again; " +
      "the response carries a secret shown once, so the repeat answers 409 RESOURCE_CONFLICT instead of a replay. " +
      "Another body with the same key is 409."
    : "Extension of SPEC 0.1.0: a repeat with the same key, method, path and body within 24 h returns the first " +
      "response (with a new meta.requestId and `Idempotent-Replayed: true`) without acting again; another body is 409.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
  "x-svc-extension": true
})

const REPLAYED_HEADER = {
  description: "Extension of SPEC 0.1.0: `true` when this is the stored answer to an earlier request with the same Idempotency-Key",
  schema: { type: "string", enum: ["true"] },
  "x-svc-extension": true
}

type Responses = Record<string, { headers?: Record<string, unknown> } & Record<string, unknown>>

/** The header parameter, and `Idempotent-Replayed` on the answers a replay can repeat. */
const documentHeader = (withheld: boolean) => (operation: Record<string, unknown>): Record<string, unknown> => {
  const parameters = Array.isArray(operation["parameters"]) ? operation["parameters"] : []
  const responses = { ...(operation["responses"] as Responses | undefined) }
  for (const [status, response] of Object.entries(responses)) {
    const replayable = withheld ? status === "400" : /^2\d\d$/.test(status) || status === "400"
    if (replayable) responses[status] = { ...response, headers: { ...response.headers, "Idempotent-Replayed": REPLAYED_HEADER } }
  }
  return { ...operation, parameters: [...parameters, headerParameter(withheld)], responses }
}

/**
 * The one-line opt-in: `.pipe(idempotent)` right after the endpoint is made, before its other
 * middlewares (middlewares declared earlier run later, after authentication).
 */
export const idempotent = <N extends string, M extends HttpMethod, P, U, B, H, S, E, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<N, M, P, U, B, H, S, E, R, RE>
) => endpoint.middleware(Idempotency).annotate(OpenApi.Transform, documentHeader(false))

/** The opt-in for an endpoint whose response carries a secret shown once. */
export const idempotentWithheld = <N extends string, M extends HttpMethod, P, U, B, H, S, E, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<N, M, P, U, B, H, S, E, R, RE>
) => endpoint.middleware(IdempotencyWithheld).annotate(OpenApi.Transform, documentHeader(true))
