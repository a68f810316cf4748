/**
 * The public status of asynchronous Agent work, read from persisted state only: the newest work
 * item of a kind and key (a retry adds a newer one), its last attempt and when it is next due.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

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

interface WorkRow {
  readonly state: "queued" | "running" | "succeeded" | "failed" | "cancelled"
  readonly next_attempt_at: Date
  readonly created_at: Date
  readonly deadline_at: Date
  readonly last_attempt_at: Date | null
  readonly last_attempt_code: string | null
  readonly last_attempt_message: string | null
  readonly attempts: number
}

/** No item (or a cancelled one) reads as `failed`: the work will not happen. */
export const workStatus = (kind: string, key: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const items = yield* sql<WorkRow>`
      SELECT state, next_attempt_at, created_at, deadline_at, last_attempt_at, last_attempt_code, last_attempt_message,
        (SELECT coalesce(sum(attempt_count), 0)::int FROM work_items WHERE kind = ${kind} AND key = ${key}) AS attempts
      FROM work_items WHERE kind = ${kind} AND key = ${key}
      ORDER BY created_at DESC LIMIT 1
    `.pipe(Effect.orDie)
    const item = items[0]
    const status: WorkStatus["status"] = item === undefined || item.state === "cancelled" ? "failed" : item.state
    const result: WorkStatus = {
      status,
      lastAttempt: item?.last_attempt_at != null
        ? { at: item.last_attempt_at, code: item.last_attempt_code!, message: item.last_attempt_message! }
        : null,
      nextAttemptAt: item?.state === "queued" ? item.next_attempt_at : null,
      attemptCount: item?.attempts ?? 0,
      item: item === undefined ? undefined : { createdAt: item.created_at, deadlineAt: item.deadline_at }
    }
    return result
  })
