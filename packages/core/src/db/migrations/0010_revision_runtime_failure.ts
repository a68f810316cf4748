import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The last runtime failure of a revision's deployment (SPEC 2.7 `runtimeFailure`): the worker
 * records `{component, check, checkedAt, code}` each time starting the revision's gateway fails,
 * so a deployment that runs out of time can say which check failed last. The work item cannot
 * keep it: the engine records `DEADLINE_EXCEEDED` over the last attempt's code.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agent_revisions ADD COLUMN runtime_failure jsonb`
})
