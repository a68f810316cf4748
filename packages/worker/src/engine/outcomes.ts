import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, type Option } from "effect"
import { WorkCodes, WorkMessages } from "./failure.js"
import type { ClaimedItem, Leases } from "./leases.js"
import type { WorkState } from "@svc/core/work"

/** What a recorded outcome did; `fenced` when this worker no longer held the lease. */
export type Recorded = { readonly _tag: "Recorded"; readonly state: WorkState } | { readonly _tag: "Fenced" }

export interface Outcomes {
  readonly succeed: (item: ClaimedItem) => Effect.Effect<Recorded, SqlError>
  /**
   * Records the success and claims the next due item of `kinds` in one statement: a busy worker
   * makes one round trip per item.
   */
  readonly succeedAndClaim: (
    item: ClaimedItem,
    kinds: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly recorded: Recorded; readonly next: Option.Option<ClaimedItem> }, SqlError>
  /**
   * Queues the item again after `delay`, recording the failure; when the retry would be due at or
   * after the deadline the item fails now with `DEADLINE_EXCEEDED`.
   */
  readonly retry: (
    item: ClaimedItem,
    failure: { readonly code: string; readonly message: string },
    delay: Duration.Duration
  ) => Effect.Effect<Recorded, SqlError>
  /** Fails the item for good. */
  readonly fail: (
    item: ClaimedItem,
    failure: { readonly code: string; readonly message: string }
  ) => Effect.Effect<Recorded, SqlError>
}

const recorded = (rows: ReadonlyArray<{ readonly state: WorkState }>): Recorded =>
  rows.length === 0 ? { _tag: "Fenced" } : { _tag: "Recorded", state: rows[0]!.state }

/**
 * Every transition checks the fencing token (`lease_owner` and `attempt_count`), so a worker
 * that lost its lease cannot overwrite the result of the worker that took the item over.
 */
export const makeOutcomes = (sql: SqlClient.SqlClient, workerId: string, leases: Leases): Outcomes => {
  const fence = (item: ClaimedItem) =>
    sql`w.id = ${item.id} AND w.state = 'running' AND w.lease_owner = ${workerId} AND w.attempt_count = ${item.attempt}`

  /** Ends the attempt for good: `succeeded` or `failed`, with the attempt's code and message. */
  const end = (
    item: ClaimedItem,
    state: "succeeded" | "failed",
    attempt: { readonly code: string; readonly message: string }
  ) =>
    sql<{ readonly state: WorkState }>`
      UPDATE work_items AS w
      SET state = ${state}, finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
          last_attempt_at = now(), last_attempt_code = ${attempt.code},
          last_attempt_message = ${attempt.message}, updated_at = now()
      WHERE ${fence(item)}
      RETURNING w.state
    `.pipe(Effect.map(recorded))

  const succeed = (item: ClaimedItem) =>
    end(item, "succeeded", { code: WorkCodes.SUCCEEDED, message: WorkMessages.SUCCEEDED })

  const succeedAndClaim = (item: ClaimedItem, kinds: ReadonlyArray<string>) =>
    Effect.map(leases.succeedAndClaim(item, kinds), ({ next, succeeded }) => ({
      recorded: succeeded ? { _tag: "Recorded", state: "succeeded" } as const : { _tag: "Fenced" } as const,
      next
    }))

  const retry = (
    item: ClaimedItem,
    failure: { readonly code: string; readonly message: string },
    delay: Duration.Duration
  ) =>
    sql<{ readonly state: WorkState }>`
      UPDATE work_items AS w
      SET state = CASE WHEN t.next_at >= w.deadline_at THEN 'failed' ELSE 'queued' END,
          finished_at = CASE WHEN t.next_at >= w.deadline_at THEN now() END,
          next_attempt_at = CASE WHEN t.next_at >= w.deadline_at THEN w.next_attempt_at ELSE t.next_at END,
          lease_owner = NULL, lease_expires_at = NULL,
          last_attempt_at = now(),
          last_attempt_code = CASE WHEN t.next_at >= w.deadline_at
            THEN ${WorkCodes.DEADLINE_EXCEEDED} ELSE ${failure.code} END,
          last_attempt_message = CASE WHEN t.next_at >= w.deadline_at
            THEN ${WorkMessages.DEADLINE_EXCEEDED} ELSE ${failure.message} END,
          updated_at = now()
      FROM (SELECT now() + make_interval(secs => ${Duration.toMillis(delay) / 1000}) AS next_at) AS t
      WHERE ${fence(item)}
      RETURNING w.state
    `.pipe(Effect.map(recorded))

  const fail = (item: ClaimedItem, failure: { readonly code: string; readonly message: string }) =>
    end(item, "failed", failure)

  return { succeed, succeedAndClaim, retry, fail }
}
