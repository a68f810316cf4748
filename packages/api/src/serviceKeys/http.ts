import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { issueServiceKey, revokeServiceKey } from "./service.js"

export const ServiceKeysLive = HttpApiBuilder.group(SvcApi, "serviceKeys", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("issue", ({ payload }) => issueServiceKey(payload).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
      .handle("revoke", ({ path }) => revokeServiceKey(path.keyId).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
  })
)
