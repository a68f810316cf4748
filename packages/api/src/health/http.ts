import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { checkReadiness } from "./readiness.js"

export const HealthLive = HttpApiBuilder.group(SvcApi, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" } as const))
      .handle("readyz", () => checkReadiness().pipe(Effect.provideService(SqlClient.SqlClient, sql)))
  })
)
