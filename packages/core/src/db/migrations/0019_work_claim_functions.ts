import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The work engine's hot statement as a PL/pgSQL function (docs/decisions/performance.md, "Work
 * engine (item 2)", session 9). PostgreSQL parsed and planned the engine's multi-CTE statement
 * (success + next claim) on every execution, which took as long as running it; a function's
 * statements are planned once per session and the plans reused (as graphile-worker's are), and
 * the call is a short text.
 *
 * `work_claim(owner, kinds, lease_seconds, max, succeeded_id, succeeded_attempt, code, message)`:
 * when `succeeded_id` is given, first records that attempt's success if `(owner, attempt)` still
 * holds the item's lease (the fencing token); then claims up to `max` of the oldest due items of
 * `kinds` (`FOR UPDATE SKIP LOCKED`): `running`, leased to `owner`, `attempt_count` + 1. Each
 * row returned carries `finished` (whether the success was recorded; null without one); when
 * nothing was claimed, one row with null item columns does. The success is written before the
 * claim looks, so the claim cannot take the finished item again.
 *
 * A generic plan is forced: with `max` a parameter PostgreSQL otherwise judged the generic plan
 * dearer and planned the claim anew on every call. The claimed ids are an array (`= ANY`), not a
 * join: the generic plan guesses `max` at a tenth of the table and hash-joined a sequential scan
 * of it. Both are ordinary UPDATEs of `work_items`, so the deployment triggers (migration 0014)
 * fire as before. Changing the function later is a new migration (`CREATE OR REPLACE`).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION work_claim(
      p_owner text, p_kinds text[], p_lease_seconds float8, p_max integer,
      p_succeeded_id uuid, p_succeeded_attempt integer, p_code text, p_message text
    )
    RETURNS TABLE (
      finished boolean, id uuid, kind text, key text, payload jsonb, attempt_count integer,
      next_attempt_at timestamptz, deadline_at timestamptz, created_at timestamptz, claimed_at timestamptz
    )
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    AS $$
    #variable_conflict use_column
    DECLARE
      v_finished boolean;
    BEGIN
      IF p_succeeded_id IS NOT NULL THEN
        UPDATE work_items AS w
        SET state = 'succeeded', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
            last_attempt_at = now(), last_attempt_code = p_code, last_attempt_message = p_message,
            updated_at = now()
        WHERE w.id = p_succeeded_id AND w.state = 'running' AND w.lease_owner = p_owner
          AND w.attempt_count = p_succeeded_attempt;
        v_finished := FOUND;
      END IF;
      RETURN QUERY
      UPDATE work_items AS w
      SET state = 'running', lease_owner = p_owner,
          lease_expires_at = now() + make_interval(secs => p_lease_seconds),
          attempt_count = w.attempt_count + 1, updated_at = now()
      WHERE w.id = ANY (ARRAY(
        SELECT d.id FROM work_items AS d
        WHERE d.state = 'queued' AND d.next_attempt_at <= now() AND d.deadline_at > now()
          AND d.kind = ANY (p_kinds)
        ORDER BY d.next_attempt_at
        LIMIT p_max
        FOR UPDATE SKIP LOCKED
      ))
      RETURNING v_finished, w.id, w.kind, w.key, w.payload, w.attempt_count, w.next_attempt_at,
                w.deadline_at, w.created_at, now();
      IF NOT FOUND THEN
        finished := v_finished;
        RETURN NEXT;
      END IF;
    END $$
  `)
})
