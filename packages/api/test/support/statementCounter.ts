/**
 * Counts the statements every pg client sends while an effect runs (issue 11: round trips per
 * request). The test server runs in the test's process and nothing else queries meanwhile.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import pg from "pg"

/** Runs `effect` counting the statements every pg client sends meanwhile, and their names (null: unnamed). */
export const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = pg.Client.prototype.query
      const counter = { statements: 0, names: [] as Array<string | null>, original }
      pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<typeof original>) {
        counter.statements++
        const config: unknown = args[0]
        counter.names.push(typeof config === "object" && config !== null && "name" in config ? String(config.name) : null)
        return (original as (...a: Parameters<typeof original>) => ReturnType<typeof original>).apply(this, args)
      } as typeof original
      return counter
    }),
    (counter) => Effect.map(effect, (result) => ({ result, statements: counter.statements, names: counter.names })),
    (counter) => Effect.sync(() => { pg.Client.prototype.query = counter.original })
  )

/**
 * Waits until the API's deployment-events listener has sent its `LISTEN` (a statement of its own
 * connection, which `counted` would otherwise count if it fell inside a counted request: seen
 * when a loaded machine delayed the listener's start past a test's first request).
 */
export const untilListening = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.gen(function* () {
    for (let i = 0; i < 600; i++) {
      const rows = yield* sql<{ readonly n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'svc-api-deployment-events'
          AND query LIKE 'LISTEN %'
      `
      if (rows[0]!.n > 0) return
      // Real time: the test clock may be in force.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
    return yield* Effect.dieMessage("the deployment-events listener did not LISTEN within 30 s")
  })
)
