import { Effect, Schema } from "effect"

export const WorkState = Schema.Literal("queued", "running", "succeeded", "failed", "cancelled")
export type WorkState = typeof WorkState.Type

/** The outcome of the most recent attempt. */
export interface LastAttempt {
  readonly at: Date
  readonly code: string
  readonly message: string
}

/** One work item's status, as read from the database. */
export interface WorkItem {
  readonly id: string
  readonly kind: string
  readonly key: string
  readonly payload: unknown
  readonly state: WorkState
  readonly attemptCount: number
  readonly lastAttempt: LastAttempt | null
  /** When the item is next due (meaningful while `queued`). */
  readonly nextAttemptAt: Date
  readonly deadlineAt: Date
  readonly leaseOwner: string | null
  readonly leaseExpiresAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly finishedAt: Date | null
}

/** The `work_items` row as the driver returns it (timestamps as Date). */
export const WorkItemRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  key: Schema.String,
  payload: Schema.Unknown,
  state: WorkState,
  attempt_count: Schema.Number,
  next_attempt_at: Schema.DateFromSelf,
  deadline_at: Schema.DateFromSelf,
  lease_owner: Schema.NullOr(Schema.String),
  lease_expires_at: Schema.NullOr(Schema.DateFromSelf),
  last_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  last_attempt_code: Schema.NullOr(Schema.String),
  last_attempt_message: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  finished_at: Schema.NullOr(Schema.DateFromSelf)
})
export type WorkItemRow = typeof WorkItemRow.Type

export const toWorkItem = (row: WorkItemRow): WorkItem => ({
  id: row.id,
  kind: row.kind,
  key: row.key,
  payload: row.payload,
  state: row.state,
  attemptCount: row.attempt_count,
  lastAttempt:
    row.last_attempt_at !== null && row.last_attempt_code !== null && row.last_attempt_message !== null
      ? { at: row.last_attempt_at, code: row.last_attempt_code, message: row.last_attempt_message }
      : null,
  nextAttemptAt: row.next_attempt_at,
  deadlineAt: row.deadline_at,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  finishedAt: row.finished_at
})

/** The columns of {@link WorkItemRow}, for `RETURNING` and `SELECT` lists. */
export const workItemColumns =
  "id, kind, key, payload, state, attempt_count, next_attempt_at, deadline_at, lease_owner, " +
  "lease_expires_at, last_attempt_at, last_attempt_code, last_attempt_message, created_at, updated_at, finished_at"

const decodeRow = Schema.decodeUnknown(WorkItemRow)

/** Decodes a `work_items` row; a row of another shape is a defect. */
export const decodeWorkItem = (row: unknown) => decodeRow(row).pipe(Effect.map(toWorkItem), Effect.orDie)
