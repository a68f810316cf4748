import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The claim functions' plans, fixed whatever the statistics (docs/decisions/performance.md,
 * "Work engine (item 2)", session 13). `work_claim` and `work_claim_batch` (migrations 0019,
 * 0020) force a generic plan, made once per session from the statistics of that moment. Made
 * while `work_items` was never analyzed, it could read every queued item through the deadline
 * index and sort them all to take the first: each claim's cost grew with the backlog, so draining
 * a backlog was quadratic (measured: sequential claims from a 5 000-item backlog took 1.25 ms each
 * over the first 1 000, 0.37 ms with the plans below, whatever the backlog). Another such plan
 * scanned the whole table for the claimed ids.
 *
 * Inside the two functions only, sorts, bitmap scans and sequential scans are priced out, which
 * leaves the plans they were written for: the oldest due items read in order from
 * `work_items_due` (stopping at the first that qualify), and the claimed and succeeded items
 * updated through the primary key. Each such setting only raises a path's cost, so a statement
 * that has no other path still runs.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const fn of [
    "work_claim(text, text[], float8, integer, uuid, integer, text, text)",
    "work_claim_batch(text, text[], float8, integer, uuid[], integer[], text, text)"
  ]) {
    for (const setting of ["enable_sort", "enable_bitmapscan", "enable_seqscan"]) {
      yield* sql.unsafe(`ALTER FUNCTION ${fn} SET ${setting} = off`)
    }
  }
})
