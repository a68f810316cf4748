import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The claim functions (migrations 0019, 0020, 0021) with the success and the next claim written by
 * one UPDATE instead of two (docs/decisions/performance.md, "Work engine (item 2)", session 22).
 * Every UPDATE of `work_items` prepares the table's nine CHECK constraints anew (PostgreSQL reads
 * each stored expression back from text per statement, not per session), which a profile of the
 * engine's database backend put at about a fifth of its CPU per item; one statement pays it once,
 * and its executor start-up and trigger set-up once.
 *
 * Same arguments, results, fencing and plans as before: the items to claim are chosen first
 * (`FOR UPDATE SKIP LOCKED`, oldest due first); the successes join them in the same UPDATE, each
 * marked as one, and a success is written only while its `(owner, attempt)` still holds the
 * lease. An item queued again meanwhile (its lease lapsed) is not in `running`, so its success is
 * not recorded, and it may be claimed again, as with two statements. The plan settings of
 * migration 0021 are part of each definition (a replacement resets them).
 */
const SETTINGS = `
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET enable_sort = off
    SET enable_bitmapscan = off
    SET enable_seqscan = off`

/** The UPDATE both functions run: `items` is `(item_id, item_attempt, success)`. */
const claimAndSucceed = (items: string) => `
      UPDATE work_items AS w
      SET state = CASE WHEN s.success THEN 'succeeded' ELSE 'running' END,
          finished_at = CASE WHEN s.success THEN now() END,
          lease_owner = CASE WHEN s.success THEN NULL ELSE p_owner END,
          lease_expires_at = CASE WHEN s.success THEN NULL ELSE now() + make_interval(secs => p_lease_seconds) END,
          attempt_count = CASE WHEN s.success THEN w.attempt_count ELSE w.attempt_count + 1 END,
          last_attempt_at = CASE WHEN s.success THEN now() ELSE w.last_attempt_at END,
          last_attempt_code = CASE WHEN s.success THEN p_code ELSE w.last_attempt_code END,
          last_attempt_message = CASE WHEN s.success THEN p_message ELSE w.last_attempt_message END,
          updated_at = now()
      FROM (${items}) AS s (item_id, item_attempt, success)
      WHERE w.id = s.item_id
        AND (NOT s.success
          OR (w.state = 'running' AND w.lease_owner = p_owner AND w.attempt_count = s.item_attempt))
      RETURNING s.success, w.id, w.kind, w.key, w.payload, w.attempt_count, w.next_attempt_at,
                w.deadline_at, w.created_at`

/**
 * The items to claim, after the successes in each function's UNION ALL: the successes' rows are
 * joined and updated (locked) first, and this array is computed only when its branch starts, so
 * the locks are taken in the order the two statements took them (a success first, then skipped
 * or free queued rows), and a writer that holds a success's row while it waits for a queued one
 * cannot deadlock with a claim.
 */
const CLAIMS = `SELECT c.item_id, NULL::integer, false FROM unnest(ARRAY(
          SELECT d.id FROM work_items AS d
          WHERE d.state = 'queued' AND d.next_attempt_at <= now() AND d.deadline_at > now()
            AND d.kind = ANY (p_kinds)
          ORDER BY d.next_attempt_at
          LIMIT p_max
          FOR UPDATE SKIP LOCKED
        )) AS c (item_id)`

const ITEM_COLUMNS = "u.id, u.kind, u.key, u.payload, u.attempt_count, u.next_attempt_at, u.deadline_at, u.created_at, now()"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION work_claim(
      p_owner text, p_kinds text[], p_lease_seconds float8, p_max integer,
      p_succeeded_id uuid, p_succeeded_attempt integer, p_code text, p_message text
    )
    RETURNS TABLE (
      finished boolean, id uuid, kind text, key text, payload jsonb, attempt_count integer,
      next_attempt_at timestamptz, deadline_at timestamptz, created_at timestamptz, claimed_at timestamptz
    )
    ${SETTINGS}
    AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH u AS (${claimAndSucceed(`
        SELECT p_succeeded_id, p_succeeded_attempt, true WHERE p_succeeded_id IS NOT NULL
        UNION ALL
        ${CLAIMS}`)}
      ),
      f AS (
        SELECT CASE WHEN p_succeeded_id IS NULL THEN NULL
                    ELSE EXISTS (SELECT 1 FROM u WHERE u.success) END AS finished
      )
      SELECT f.finished, ${ITEM_COLUMNS}
      FROM f LEFT JOIN u ON NOT u.success;
    END $$
  `)
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION work_claim_batch(
      p_owner text, p_kinds text[], p_lease_seconds float8, p_max integer,
      p_succeeded_ids uuid[], p_succeeded_attempts integer[], p_code text, p_message text
    )
    RETURNS TABLE (
      finished uuid[], id uuid, kind text, key text, payload jsonb, attempt_count integer,
      next_attempt_at timestamptz, deadline_at timestamptz, created_at timestamptz, claimed_at timestamptz
    )
    ${SETTINGS}
    AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH u AS (${claimAndSucceed(`
        SELECT s.item_id, s.item_attempt, true
        FROM unnest(p_succeeded_ids, p_succeeded_attempts) AS s (item_id, item_attempt)
        UNION ALL
        ${CLAIMS}`)}
      ),
      f AS (
        SELECT coalesce((SELECT array_agg(u.id) FROM u WHERE u.success), '{}') AS finished
      )
      SELECT f.finished, ${ITEM_COLUMNS}
      FROM f LEFT JOIN u ON NOT u.success;
    END $$
  `)
})
