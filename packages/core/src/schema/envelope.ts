import { Context, Effect, ParseResult, Schema } from "effect"
import { UUID_V4 } from "./ids.js"
import { trustedEncoding, trustedType } from "./trusted.js"

/**
 * The id of the request being served. Provided by the HTTP server for each request; read by
 * the envelope encoders. A Reference, so schemas can read it without a requirement.
 */
export class CurrentRequestId extends Context.Reference<CurrentRequestId>()("@svc/core/CurrentRequestId", {
  defaultValue: (): string => "req_00000000-0000-4000-8000-000000000000"
}) {}

/**
 * `meta` of every envelope. The id pattern is documentation only (a `jsonSchema` annotation),
 * so encoding a response can never fail on it.
 */
export const Meta = Schema.Struct({
  requestId: Schema.String.annotations({
    description: "req_ followed by a lowercase UUIDv4; also sent as the x-request-id header",
    jsonSchema: { type: "string", pattern: `^req_${UUID_V4}$` }
  })
}).annotations({ identifier: "Meta" })

/**
 * The success envelope `{ data, meta: { requestId } }` around a domain schema. Handlers return
 * the plain domain value; encoding wraps it and stamps the current request id.
 */
export const Envelope = <A, I, R>(data: Schema.Schema<A, I, R>, identifier?: string) =>
  envelopeOf(data, Schema.typeSchema(data), identifier)

/**
 * The envelope of a list page (issue 11, item 3): the same wire form and OpenAPI schema as
 * `Envelope`, but the page is encoded trusting its items (`trustedEncoding`): handlers build
 * them from the service's own rows, so Effect's validation of every id and timestamp of every
 * item on the way out is skipped. Clients still decode it in full.
 */
export const ListEnvelope = <A, I>(data: Schema.Schema<A, I>, identifier: string) =>
  envelopeOf(trustedEncoding(data), trustedType(data), identifier)

const envelopeOf = <A, I, R>(data: Schema.Schema<A, I, R>, type: Schema.Schema<A, A, R>, identifier?: string) =>
  Schema.transformOrFail(
    Schema.Struct({ data, meta: Meta }).annotations(identifier ? { identifier } : {}),
    type,
    {
      strict: true,
      decode: (envelope) => ParseResult.succeed(envelope.data),
      encode: (value) => Effect.map(CurrentRequestId, (requestId) => ({ data: value, meta: { requestId } }))
    }
  )
