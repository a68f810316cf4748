import { SqlClient } from "@effect/sql"
import { Migrations } from "@svc/core/db"
import { DependencyUnavailable } from "@svc/core/errors"
import { Duration, Effect } from "effect"
import { exportedFn } from "@svc/core/observability"

const READINESS_TIMEOUT = Duration.seconds(3)

/** Ready when the database answers and every migration of this build is applied. */
export const checkReadiness = exportedFn("Health.readiness")(function* () {
  const sql = yield* SqlClient.SqlClient
  const current = yield* Effect.gen(function* () {
    yield* sql`SELECT 1`
    return yield* Migrations.isCurrent
  }).pipe(
    Effect.timeoutFail({
      duration: READINESS_TIMEOUT,
      onTimeout: () => new DependencyUnavailable({ message: "The database did not answer in time." })
    }),
    Effect.catchTag("SqlError", (error) =>
      Effect.zipRight(
        Effect.logWarning("readiness: database unreachable", error),
        Effect.fail(new DependencyUnavailable({ message: "The database is unreachable." }))
      )
    )
  )
  if (!current) {
    return yield* new DependencyUnavailable({ message: "The database migrations are not current." })
  }
  return { status: "ready", database: "ok", migrations: "current" } as const
})
