import { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { PgPool } from "../db/pgPool.js"
import { runNamed } from "../db/namedStatement.js"
import { decodeWorkItem, type WorkItem, workItemColumns } from "./item.js"
import { annotateExportedSpan, exportedFn } from "../observability/spans.js"

/** The channel workers `LISTEN` on; the payload of each notification is the item's kind. */
export const WORK_CHANNEL = "svc_work"

/** How long an item may keep being retried when the caller names no deadline. */
export const DEFAULT_DEADLINE: Duration.Duration = Duration.hours(24)

export interface EnqueueOptions {
  /** Which handler runs the item (1-200 characters). */
  readonly kind: string
  /** Idempotency key (1-200 characters): at most one unfinished item per (kind, key). */
  readonly key: string
  /** JSON payload, decoded by the handler's schema. Defaults to `{}`. */
  readonly payload?: unknown
  /** Relative to now, or an absolute time; defaults to 24 hours. Past it the item fails. */
  readonly deadline?: Duration.DurationInput | Date | undefined
  /** Do not run the item before this much time has passed. */
  readonly delay?: Duration.DurationInput | undefined
}

export interface Enqueued {
  /** False when an unfinished item with the same (kind, key) already existed. */
  readonly created: boolean
  /** The new item, or the existing one (whose payload and deadline are kept). */
  readonly item: WorkItem
}

const seconds = (input: Duration.DurationInput): number => Duration.toMillis(Duration.decode(input)) / 1000

const checkName = (what: string, value: string): Effect.Effect<void> =>
  value.length >= 1 && value.length <= 200
    ? Effect.void
    : Effect.dieMessage(`work item ${what} must be 1-200 characters, got ${value.length}`)

/**
 * Inserts a work item with the ambient `SqlClient`, so it commits or rolls back with the
 * caller's transaction, and notifies workers (delivered by PostgreSQL at commit).
 * Enqueueing a (kind, key) that has an unfinished item returns that item instead.
 */
export const enqueue: (options: EnqueueOptions) => Effect.Effect<Enqueued, SqlError, SqlClient.SqlClient> = exportedFn(
  "Work.enqueue"
)(function* (options: EnqueueOptions) {
  yield* checkName("kind", options.kind)
  yield* checkName("key", options.key)
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const payload = JSON.stringify(options.payload === undefined ? {} : options.payload)
  if (payload === undefined) return yield* Effect.dieMessage("work item payload is not JSON")
  const delay = options.delay === undefined ? 0 : Math.max(0, seconds(options.delay))
  const deadline =
    options.deadline instanceof Date
      ? sql`${options.deadline}::timestamptz`
      : sql`now() + make_interval(secs => ${seconds(options.deadline ?? DEFAULT_DEADLINE)})`
  yield* annotateExportedSpan({ kind: options.kind })
  // Outside a transaction, with the process's pool at hand, the statements go as named prepared
  // statements: PostgreSQL does not parse and plan them inside the enqueue's own transaction,
  // which the item's wait until a worker claims it is measured from.
  const pool = yield* Effect.serviceOption(PgPool)
  const run = <A extends object>(statement: Statement.Statement<A>) =>
    Option.isSome(pool) ? runNamed(pool.value, statement) : statement

  // A concurrent finish of the existing item can make both statements miss: try again.
  for (let round = 0; round < 3; round++) {
    // The notification is sent by the same statement: outside a transaction, the item and its
    // wake-up commit together, in one round trip (it is delivered at commit, as always).
    const inserted = yield* run(sql`
      WITH inserted AS (
        INSERT INTO work_items (id, kind, key, payload, next_attempt_at, deadline_at)
        VALUES (
          ${crypto.randomUUID()}, ${options.kind}, ${options.key}, ${payload}::jsonb,
          now() + make_interval(secs => ${delay}), ${deadline}
        )
        ON CONFLICT (kind, key) WHERE state IN ('queued', 'running') DO NOTHING
        RETURNING ${sql.literal(workItemColumns)}
      )
      SELECT inserted.* FROM inserted CROSS JOIN LATERAL pg_notify(${WORK_CHANNEL}, inserted.kind) AS notified
    `)
    if (inserted.length > 0) return { created: true, item: yield* decodeWorkItem(inserted[0]) }
    const existing = yield* run(sql`
      SELECT ${sql.literal(workItemColumns)} FROM work_items
      WHERE kind = ${options.kind} AND key = ${options.key} AND state IN ('queued', 'running')
    `)
    if (existing.length > 0) return { created: false, item: yield* decodeWorkItem(existing[0]) }
  }
  return yield* Effect.dieMessage("work item enqueue kept conflicting with a finishing item")
})
