import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The durable work queue (DESIGN §5): one row per item of asynchronous work.
 *
 * - `attempt_count` is incremented when an item is claimed; together with `lease_owner` it is the
 *   fencing token a worker presents on every state transition.
 * - `last_attempt_*` describe the outcome of the most recent attempt (all three set, or none);
 *   codes and messages are safe, fixed texts (1-64 and 1-256 characters).
 * - Terminal states carry `finished_at`; `running` carries a lease.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE work_items (
      id               uuid PRIMARY KEY,
      kind             text NOT NULL CHECK (char_length(kind) BETWEEN 1 AND 200),
      key              text NOT NULL CHECK (char_length(key) BETWEEN 1 AND 200),
      payload          jsonb NOT NULL DEFAULT '{}'::jsonb,
      state            text NOT NULL DEFAULT 'queued'
                       CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      attempt_count    integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
      next_attempt_at  timestamptz NOT NULL DEFAULT now(),
      deadline_at      timestamptz NOT NULL,
      lease_owner      text,
      lease_expires_at timestamptz,
      last_attempt_at  timestamptz,
      last_attempt_code text CHECK (char_length(last_attempt_code) BETWEEN 1 AND 64),
      last_attempt_message text CHECK (char_length(last_attempt_message) BETWEEN 1 AND 256),
      created_at       timestamptz NOT NULL DEFAULT now(),
      updated_at       timestamptz NOT NULL DEFAULT now(),
      finished_at      timestamptz,
      CHECK ((state = 'running') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
      CHECK ((state IN ('succeeded', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
      CHECK (
        (last_attempt_at IS NULL) = (last_attempt_code IS NULL)
        AND (last_attempt_code IS NULL) = (last_attempt_message IS NULL)
      )
    )
  `
  // At most one unfinished item per (kind, key): enqueueing the same work twice is idempotent.
  yield* sql`
    CREATE UNIQUE INDEX work_items_pending_key ON work_items (kind, key)
    WHERE state IN ('queued', 'running')
  `
  yield* sql`CREATE INDEX work_items_due ON work_items (next_attempt_at) WHERE state = 'queued'`
  yield* sql`CREATE INDEX work_items_leases ON work_items (lease_expires_at) WHERE state = 'running'`
  yield* sql`CREATE INDEX work_items_queued_deadline ON work_items (deadline_at) WHERE state = 'queued'`
})
