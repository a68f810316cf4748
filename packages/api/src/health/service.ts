/**
 * Liveness and readiness (DESIGN §3). Readiness asks the database, so the service takes the
 * SqlClient once; neither needs a caller (both endpoints are public).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { checkReadiness } from "./readiness.js"

export class Health extends Effect.Service<Health>()("@svc/api/Health", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    live: () => Effect.succeed({ status: "ok" } as const),
    ready: () => checkReadiness().pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }))
}) {}
