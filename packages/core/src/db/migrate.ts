import { Migrator, SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { syncBuiltinRoles } from "../iam/builtinRolesSync.js"
import { migrations } from "./migrations/index.js"
import { withExportedSpan } from "../observability/spans.js"

const MIGRATIONS_TABLE = "svc_migrations"

const loader = Migrator.fromRecord(migrations)

/** The newest migration id this build knows. */
export const latestMigrationId: number = Math.max(
  ...Object.keys(migrations).map((key) => Number.parseInt(key.split("_")[0]!, 10))
)

/**
 * Applies pending migrations in one transaction. The Migrator takes an exclusive lock on its
 * table, so replicas starting at once apply each migration exactly once.
 */
export const run = Migrator.make({})({ loader, table: MIGRATIONS_TABLE }).pipe(
  // Built-in Roles are defined by code, so every build writes its own definition.
  Effect.tap(() => syncBuiltinRoles),
  withExportedSpan("Migrations.run")
)

/** True when every migration of this build has been applied (readiness). */
export const isCurrent = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const exists = yield* sql<{ present: boolean }>`SELECT to_regclass(${MIGRATIONS_TABLE}) IS NOT NULL AS present`
  if (!exists[0]?.present) return false
  const rows = yield* sql<{ latest: number | null }>`
    SELECT max(migration_id) AS latest FROM ${sql(MIGRATIONS_TABLE)}
  `
  return Number(rows[0]?.latest ?? 0) >= latestMigrationId
})
