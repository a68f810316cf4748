/**
 * The deployment event stream's contract (DESIGN §18 "Watch", an extension): its media type,
 * the bound on open streams per caller, and the error past it. Browser-safe like the rest of
 * `@svc/core/api`; the client's parser lives in `@svc/core/client`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { ErrorMessage } from "../../errors/index.js"
import { CurrentRequestId, Meta } from "../../schema/index.js"

/** The SSE event name of every status event; its `data` is the DeploymentStatus JSON, as `data` of the status read. */
export const DEPLOYMENT_STATUS_EVENT = "status"

/** How many deployment event streams one caller principal may hold open at once. */
export const MAX_DEPLOYMENT_STREAMS_PER_CALLER = 5

/**
 * The success body: `text/event-stream`. Each event is `event: status` with a `data:` line
 * holding the deployment status exactly as `data` of the status read; `:` comment lines are heartbeats.
 */
export const DeploymentEventStream = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  identifier: "DeploymentEventStream",
  description:
    "Server-Sent Events. The current status at once, then one `status` event per change, closing after the terminal status " +
    "(`succeeded` or `failed`). Each event: `event: status` and `data: <DeploymentStatus JSON>` (what `data` of the status read holds). " +
    "A `: heartbeat` comment line about every 15 s."
})

/**
 * Too many open streams for the caller (429). SPEC 7.1 has no code of its own for it, so the
 * envelope carries `RESOURCE_CONFLICT` (docs/decisions/deployment-events.md); the status tells
 * it apart from a 409.
 */
export class DeploymentStreamLimit extends Schema.TaggedError<DeploymentStreamLimit>()("DeploymentStreamLimit", {
  message: Schema.String
}) {}

export const DeploymentStreamLimitWire = Schema.transformOrFail(
  Schema.Struct({
    error: Schema.Struct({ code: Schema.Literal("RESOURCE_CONFLICT"), message: ErrorMessage }),
    meta: Meta
  }).annotations({
    identifier: "DeploymentStreamLimit",
    description: `429 RESOURCE_CONFLICT: the caller already holds ${MAX_DEPLOYMENT_STREAMS_PER_CALLER} open deployment event streams`
  }),
  DeploymentStreamLimit,
  {
    strict: true,
    decode: ({ error }) => ParseResult.succeed(new DeploymentStreamLimit({ message: error.message })),
    encode: (value) =>
      Effect.map(CurrentRequestId, (requestId) => ({
        error: { code: "RESOURCE_CONFLICT" as const, message: value.message },
        meta: { requestId }
      }))
  }
).annotations({
  ...HttpApiSchema.annotations({ status: 429 }),
  description: "RESOURCE_CONFLICT with status 429: too many open deployment event streams for this caller"
})
