/**
 * The `work_items` table as a service (DESIGN §5): enqueue in the caller's transaction, one item
 * by id, and the public status of asynchronous work, read from persisted state only: the newest
 * work item of a kind and key (a retry adds a newer one), its last attempt and when it is next
 * due. The SqlClient is taken once; inside `sql.withTransaction` the queries still join the
 * caller's transaction (the client finds its connection in the fiber's context).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { enqueue, type Enqueued, type EnqueueOptions } from "../../work/enqueue.js"
import { WorkState } from "../../work/item.js"
import { getWorkItem } from "../../work/status.js"

export interface WorkStatus {
  readonly status: "queued" | "running" | "succeeded" | "failed"
  readonly lastAttempt: { readonly at: Date; readonly code: string; readonly message: string } | null
  /** When a queued item is next due; null otherwise. */
  readonly nextAttemptAt: Date | null
  /** Attempts over every item of the key. */
  readonly attemptCount: number
  /** The newest item's admission and deadline, when there is one. */
  readonly item: { readonly createdAt: Date; readonly deadlineAt: Date } | undefined
}

/** The newest item of a kind and key, with the attempts of every item of the key. */
const WorkStatusRow = Schema.Struct({
  state: WorkState,
  next_attempt_at: Schema.DateFromSelf,
  created_at: Schema.DateFromSelf,
  deadline_at: Schema.DateFromSelf,
  last_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  last_attempt_code: Schema.NullOr(Schema.String),
  last_attempt_message: Schema.NullOr(Schema.String),
  attempts: Schema.Number
})
type WorkStatusRow = typeof WorkStatusRow.Type

const WorkKey = Schema.Struct({ kind: Schema.String, key: Schema.String })

/** No item (or a cancelled one) reads as `failed`: the work will not happen. */
const toWorkStatus = (found: Option.Option<WorkStatusRow>): WorkStatus => {
  const item = Option.getOrUndefined(found)
  const status: WorkStatus["status"] = item === undefined || item.state === "cancelled" ? "failed" : item.state
  return {
    status,
    lastAttempt: item?.last_attempt_at != null
      ? { at: item.last_attempt_at, code: item.last_attempt_code!, message: item.last_attempt_message! }
      : null,
    nextAttemptAt: item?.state === "queued" ? item.next_attempt_at : null,
    attemptCount: item?.attempts ?? 0,
    item: item === undefined ? undefined : { createdAt: item.created_at, deadlineAt: item.deadline_at }
  }
}

export class WorkItemsRepo extends Effect.Service<WorkItemsRepo>()("@svc/core/WorkItemsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * SPEC 3: `running` is a live claim. A claim whose lease ran out (its worker died, and no
     * reaper has requeued it yet) is none: it reads `queued`, due since the lease lapsed.
     */
    const lapsed = sql.literal("state = 'running' AND lease_expires_at < now()")

    const latest = SqlSchema.findOne({
      Request: WorkKey,
      Result: WorkStatusRow,
      execute: ({ key, kind }) => sql`
        SELECT
          CASE WHEN ${lapsed} THEN 'queued' ELSE state END AS state,
          CASE WHEN ${lapsed} THEN lease_expires_at ELSE next_attempt_at END AS next_attempt_at,
          created_at, deadline_at, last_attempt_at, last_attempt_code, last_attempt_message,
          (SELECT coalesce(sum(attempt_count), 0)::int FROM work_items WHERE kind = ${kind} AND key = ${key}) AS attempts
        FROM work_items WHERE kind = ${kind} AND key = ${key}
        ORDER BY created_at DESC LIMIT 1
      `
    })

    return {
      /** Queues an item in the caller's transaction (idempotent per unfinished kind and key). */
      enqueue: (options: EnqueueOptions): Effect.Effect<Enqueued, SqlError> =>
        enqueue(options).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
      get: (id: string) => getWorkItem(id).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie),
      /** The public status of the work of a kind and key. */
      status: (kind: string, key: string): Effect.Effect<WorkStatus> =>
        latest({ kind, key }).pipe(Effect.map(toWorkStatus), Effect.orDie)
    }
  })
}) {}
