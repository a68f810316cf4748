import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The audit API pages in `(at, id)` order (docs/decisions/audit-api.md): one index for the
 * Installation-wide listing and one for a Namespace's, so every page is an index range scan.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX audit_events_keyset ON audit_events (at, id)`
  yield* sql`CREATE INDEX audit_events_namespace_keyset ON audit_events (namespace_id, at, id)`
})
