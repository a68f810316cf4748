import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `work_claim_batch`: `work_claim` (migration 0019) for several slots of one worker at once
 * (docs/decisions/performance.md, "Work engine (item 2)", session 10). The engine coalesces the
 * claims and success + next claims that its slots ask for while a call is on the wire into the
 * next call, so a busy worker commits once for several items instead of once per item. Each
 * slot still waits for its own success to be recorded before it runs its next item.
 *
 * `work_claim_batch(owner, kinds, lease_seconds, max, succeeded_ids, succeeded_attempts, code,
 * message)`: first records the success of every `(succeeded_ids[i], succeeded_attempts[i])` that
 * `owner` still holds (each fenced on its own, as in `work_claim`); then claims up to `max` of
 * the oldest due items of `kinds`. Every row returned carries `finished`, the ids whose success
 * was recorded; when nothing was claimed, one row with null item columns does.
 *
 * `work_claim` stays: workers of the previous release call it until they are replaced.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION work_claim_batch(
      p_owner text, p_kinds text[], p_lease_seconds float8, p_max integer,
      p_succeeded_ids uuid[], p_succeeded_attempts integer[], p_code text, p_message text
    )
    RETURNS TABLE (
      finished uuid[], id uuid, kind text, key text, payload jsonb, attempt_count integer,
      next_attempt_at timestamptz, deadline_at timestamptz, created_at timestamptz, claimed_at timestamptz
    )
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    AS $$
    #variable_conflict use_column
    DECLARE
      v_finished uuid[] := '{}';
    BEGIN
      IF cardinality(p_succeeded_ids) > 0 THEN
        WITH done AS (
          UPDATE work_items AS w
          SET state = 'succeeded', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
              last_attempt_at = now(), last_attempt_code = p_code, last_attempt_message = p_message,
              updated_at = now()
          FROM unnest(p_succeeded_ids, p_succeeded_attempts) AS s (item_id, item_attempt)
          WHERE w.id = s.item_id AND w.state = 'running' AND w.lease_owner = p_owner
            AND w.attempt_count = s.item_attempt
          RETURNING w.id
        )
        SELECT coalesce(array_agg(done.id), '{}') INTO v_finished FROM done;
      END IF;
      IF p_max > 0 THEN
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
        IF FOUND THEN
          RETURN;
        END IF;
      END IF;
      finished := v_finished;
      RETURN NEXT;
    END $$
  `)
})
