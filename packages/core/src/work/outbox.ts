import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import { enqueue } from "./enqueue.js"

/**
 * Where tenancy puts its asynchronous work: the durable outbox, written in the caller's
 * transaction (the ambient SqlClient, so a caller that is not a service, such as bootstrap,
 * can use it). A tag with one layer, so callers name the outbox without naming its table.
 */
export class WorkOutbox extends Context.Tag("@svc/core/tenancy/WorkOutbox")<WorkOutbox, {
  readonly enqueue: (item: {
    readonly kind: string
    readonly key: string
    readonly payload?: unknown
  }) => Effect.Effect<void, SqlError, SqlClient.SqlClient>
}>() {}

/** The durable outbox: `enqueue` in the caller's transaction (idempotent per kind and key). */
export const WorkOutboxLive = Layer.succeed(WorkOutbox, {
  enqueue: (item) => Effect.asVoid(enqueue(item))
})
