import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Two extensions (DESIGN §18):
 * - Rollback: a revision made from an earlier revision's snapshot names it in
 *   `rolled_back_from`. Revisions are removed only with their Agent, all at once, so the
 *   reference never outlives its target; SET NULL keeps that removal order-free.
 * - Deployment events: every change of an `agent.deploy` work item that its deployment status
 *   shows (state, last attempt, next attempt) is announced with `pg_notify('svc_deployment',
 *   <revision id>)`. A trigger and not the engine's statements: the enqueue, the claim, every
 *   outcome, the reaper and any later writer all notify, at their own commit, without each
 *   having to remember to. Lease renewals change none of these columns and stay silent.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE agent_revisions
      ADD COLUMN rolled_back_from text REFERENCES agent_revisions (id) ON DELETE SET NULL
  `
  yield* sql.unsafe(`
    CREATE FUNCTION notify_deployment_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('svc_deployment', NEW.key);
      RETURN NULL;
    END $$
  `)
  yield* sql`
    CREATE TRIGGER work_items_deployment_inserted AFTER INSERT ON work_items
    FOR EACH ROW WHEN (NEW.kind = 'agent.deploy')
    EXECUTE FUNCTION notify_deployment_change()
  `
  yield* sql`
    CREATE TRIGGER work_items_deployment_changed AFTER UPDATE ON work_items
    FOR EACH ROW WHEN (NEW.kind = 'agent.deploy' AND (
      OLD.state IS DISTINCT FROM NEW.state
      OR OLD.last_attempt_at IS DISTINCT FROM NEW.last_attempt_at
      OR OLD.last_attempt_code IS DISTINCT FROM NEW.last_attempt_code
      OR OLD.next_attempt_at IS DISTINCT FROM NEW.next_attempt_at))
    EXECUTE FUNCTION notify_deployment_change()
  `
})
