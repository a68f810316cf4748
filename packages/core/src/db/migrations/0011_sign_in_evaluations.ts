import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Sign-in attempts are reserved before the password is hashed (issue 10 §2): a row of
 * `sign_in_failures` is inserted under a per-key advisory lock before any evaluation and deleted
 * again when the attempt signs in. `evaluated` tells the rows whose password was checked (they
 * count against the budget of evaluations) from the throttled attempts that were refused without
 * a check (they only lengthen the delay). Existing rows were all checked.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sign_in_failures ADD COLUMN evaluated boolean NOT NULL DEFAULT true`
})
