import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A Namespace whose provisioning work ends `failed` becomes `failed` (SPEC 3: a permanent
 * provisioning failure). The reconciler moves it itself when the Compute Driver reports a
 * permanent failure, but a transient one is retried until the item's deadline, and the engine then
 * fails the item (`DEADLINE_EXCEEDED`) in one of several statements (an outcome, the lease reaper,
 * the past-deadline sweep) without running the handler again. Without this the Namespace stayed
 * `provisioning` for good: nothing queues its provisioning again, and Agents could still be created
 * in it. A trigger, like the deployment events' (0014), so that every statement that fails the
 * item moves the Namespace in the same transaction, and a crash cannot separate the two.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION fail_unprovisioned_namespace() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE namespaces SET status = 'failed', updated_at = now()
      WHERE id = NEW.key AND status = 'provisioning';
      RETURN NULL;
    END $$
  `)
  yield* sql`
    CREATE TRIGGER work_items_namespace_provision_failed AFTER UPDATE ON work_items
    FOR EACH ROW WHEN (NEW.kind = 'namespace.provision' AND NEW.state = 'failed' AND OLD.state <> 'failed')
    EXECUTE FUNCTION fail_unprovisioned_namespace()
  `
})
