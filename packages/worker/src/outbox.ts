import { WorkOutbox } from "@svc/core/tenancy"
import { Effect, Layer } from "effect"
import { enqueue } from "./engine/enqueue.js"

/**
 * The durable outbox behind `@svc/core`'s `WorkOutbox` port: `enqueue` in the caller's
 * transaction (idempotent per kind and key).
 */
export const WorkOutboxLive = Layer.succeed(WorkOutbox, {
  enqueue: (item) => Effect.asVoid(enqueue(item))
})
