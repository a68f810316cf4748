import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type pg from "pg"
import { Duration, Effect, Either, type Option, Schema } from "effect"
import { makeClaimBatch } from "./claimBatch.js"
import { WorkCodes, WorkMessages } from "./failure.js"
import { recordReaped } from "./metrics.js"

/** An item this worker holds the lease of. `(workerId, attempt)` is the fencing token. */
export interface ClaimedItem {
  readonly id: string
  readonly kind: string
  readonly key: string
  readonly payload: unknown
  readonly attempt: number
  readonly scheduledAt: Date
  readonly claimedAt: Date
  readonly deadlineAt: Date
  readonly createdAt: Date
}

const ClaimedRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  key: Schema.String,
  payload: Schema.Unknown,
  attempt_count: Schema.Number,
  next_attempt_at: Schema.DateFromSelf,
  claimed_at: Schema.DateFromSelf,
  deadline_at: Schema.DateFromSelf,
  created_at: Schema.DateFromSelf
})
// Prepared once; decoding is synchronous (no effect per row).
const decodeClaimedRow = Schema.decodeUnknownEither(ClaimedRow)

/** Decodes the `claimed` columns of a row; a null `id` means nothing was claimed. */
export const decodeClaimed = (row: { readonly id?: unknown } | undefined): Effect.Effect<Option.Option<ClaimedItem>> => {
  if (row === undefined || row.id === null || row.id === undefined) return Effect.succeedNone
  const decoded = decodeClaimedRow(row)
  if (Either.isLeft(decoded)) return Effect.die(decoded.left)
  const r = decoded.right
  return Effect.succeedSome({
    id: r.id,
    kind: r.kind,
    key: r.key,
    payload: r.payload,
    attempt: r.attempt_count,
    scheduledAt: r.next_attempt_at,
    claimedAt: r.claimed_at,
    deadlineAt: r.deadline_at,
    createdAt: r.created_at
  })
}

const REAP_BATCH = 100

export interface Leases {
  /** Claims the oldest due item of one of `kinds`. */
  readonly claim: (kinds: ReadonlyArray<string>) => Effect.Effect<Option.Option<ClaimedItem>, SqlError>
  /**
   * Records `item`'s success and claims the oldest due item of `kinds`, in one statement: a busy
   * worker makes one round trip per item. `succeeded` is false when this worker no longer held
   * the item's lease (fenced: nothing recorded).
   */
  readonly succeedAndClaim: (
    item: ClaimedItem,
    kinds: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly succeeded: boolean; readonly next: Option.Option<ClaimedItem> }, SqlError>
  /** Extends the lease; false when this worker no longer holds it. */
  readonly renew: (item: ClaimedItem) => Effect.Effect<boolean, SqlError>
  /** Gives the item back (shutdown): queued again, the attempt withdrawn, nothing recorded. */
  readonly release: (item: ClaimedItem) => Effect.Effect<boolean, SqlError>
  /** Returns items whose lease expired to `queued` (or fails them when past their deadline). */
  readonly reapExpired: Effect.Effect<number, SqlError>
  /** Fails queued items whose deadline has passed. */
  readonly failPastDeadline: Effect.Effect<number, SqlError>
  /** Milliseconds until the next queued item of `kinds` is due (negative: already due); null if none. */
  readonly nextDueIn: (kinds: ReadonlyArray<string>) => Effect.Effect<number | null, SqlError>
}

export const makeLeases = (
  sql: SqlClient.SqlClient,
  pool: pg.Pool,
  workerId: string,
  leaseDuration: Duration.Duration,
  /** How many slots share these leases (the engine's concurrency): one has no claims to coalesce. */
  slots: number
): Leases => {
  const leaseSeconds = Duration.toMillis(leaseDuration) / 1000
  const fence = (item: ClaimedItem) =>
    sql`id = ${item.id} AND state = 'running' AND lease_owner = ${workerId} AND attempt_count = ${item.attempt}`

  // `work_claim_batch` (migration 0020), a function whose statements are planned once per
  // connection, called as a named prepared statement; the slots' requests are coalesced into one
  // call while another is on the wire. With an item, the call first records that attempt's success.
  const claimBatch = makeClaimBatch(pool, workerId, leaseSeconds, slots)

  const claim = (kinds: ReadonlyArray<string>) =>
    Effect.flatMap(claimBatch({ kinds, succeeded: null }), (answer) => decodeClaimed(answer.row))

  const succeedAndClaim = (item: ClaimedItem, kinds: ReadonlyArray<string>) =>
    Effect.flatMap(claimBatch({ kinds, succeeded: item }), (answer) =>
      Effect.map(decodeClaimed(answer.row), (next) => ({ succeeded: answer.succeeded, next }))
    )

  const renew = (item: ClaimedItem) =>
    sql`
      UPDATE work_items
      SET lease_expires_at = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
      WHERE ${fence(item)}
      RETURNING id
    `.pipe(Effect.map((rows) => rows.length > 0))

  const release = (item: ClaimedItem) =>
    sql`
      UPDATE work_items
      SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL,
          attempt_count = attempt_count - 1, updated_at = now()
      WHERE ${fence(item)}
      RETURNING id
    `.pipe(Effect.map((rows) => rows.length > 0))

  const reapExpired = sql`
    WITH expired AS (
      SELECT id FROM work_items
      WHERE state = 'running' AND lease_expires_at < now()
      ORDER BY lease_expires_at
      LIMIT ${REAP_BATCH}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE work_items AS w
    SET state = CASE WHEN w.deadline_at <= now() THEN 'failed' ELSE 'queued' END,
        finished_at = CASE WHEN w.deadline_at <= now() THEN now() END,
        lease_owner = NULL, lease_expires_at = NULL,
        last_attempt_at = now(),
        last_attempt_code = CASE WHEN w.deadline_at <= now()
          THEN ${WorkCodes.DEADLINE_EXCEEDED} ELSE ${WorkCodes.LEASE_EXPIRED} END,
        last_attempt_message = CASE WHEN w.deadline_at <= now()
          THEN ${WorkMessages.DEADLINE_EXCEEDED} ELSE ${WorkMessages.LEASE_EXPIRED} END,
        updated_at = now()
    FROM expired WHERE w.id = expired.id
    RETURNING w.kind, w.state
  `.pipe(Effect.tap(recordReaped), Effect.map((rows) => rows.length))

  const failPastDeadline = sql`
    WITH late AS (
      SELECT id FROM work_items
      WHERE state = 'queued' AND deadline_at <= now()
      LIMIT ${REAP_BATCH}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE work_items AS w
    SET state = 'failed', finished_at = now(), last_attempt_at = now(),
        last_attempt_code = ${WorkCodes.DEADLINE_EXCEEDED},
        last_attempt_message = ${WorkMessages.DEADLINE_EXCEEDED},
        updated_at = now()
    FROM late WHERE w.id = late.id
    RETURNING w.kind, w.state
  `.pipe(Effect.tap(recordReaped), Effect.map((rows) => rows.length))

  const nextDueIn = (kinds: ReadonlyArray<string>) =>
    sql<{ readonly ms: number | null }>`
      SELECT (EXTRACT(EPOCH FROM (min(next_attempt_at) - now())) * 1000)::float8 AS ms
      FROM work_items
      WHERE state = 'queued' AND deadline_at > now() AND kind IN ${sql.in(kinds)}
    `.pipe(Effect.map((rows) => rows[0]?.ms ?? null))

  /** Repeats a batch statement while batches come back full, so a backlog clears in one pass. */
  const drain = (batch: Effect.Effect<number, SqlError>) =>
    Effect.iterate({ total: 0, last: REAP_BATCH }, {
      while: (state) => state.last === REAP_BATCH,
      body: (state) => Effect.map(batch, (n) => ({ total: state.total + n, last: n }))
    }).pipe(Effect.map((state) => state.total))

  return {
    claim,
    succeedAndClaim,
    renew,
    release,
    reapExpired: drain(reapExpired),
    failPastDeadline: drain(failPastDeadline),
    nextDueIn
  }
}
