/**
 * Shared pieces of the work engine tests: a migrated database whose URL the tests know (to build
 * separate engines and child processes against it), engines that a test can stop mid-way, and
 * polling helpers.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { PgClient } from "@effect/sql-pg"
import { Migrations, type PgPool } from "@svc/core/db"
import { Cause, Context, Duration, Effect, Exit, FiberRef, HashSet, Layer, Logger, LogLevel, Option, Scope } from "effect"
import { pgClientLayer, TestDatabaseUrl } from "../../../testing/database.js"
import { enqueue, getWorkItem, WorkEngine, type WorkEngineOptions, WorkHandlers, type WorkItem } from "../src/index.js"

export class DatabaseUrl extends Context.Tag("test/DatabaseUrl")<DatabaseUrl, string>() {}

/** A fresh migrated database for one test file: its URL, and a client for the test's own queries. */
export const TestDatabase: Layer.Layer<DatabaseUrl | SqlClient.SqlClient | PgClient.PgClient | PgPool> = Layer.unwrapScoped(
  Effect.map(TestDatabaseUrl, (url) =>
    Layer.merge(
      Layer.succeed(DatabaseUrl, url),
      Layer.provideMerge(Layer.effectDiscard(Migrations.run), pgClientLayer(url))
    )
  )
).pipe(Layer.orDie)

/** Handler layers as the tests write them: they may use the engine's database client. */
export type Handlers = Layer.Layer<never, never, WorkHandlers | SqlClient.SqlClient | PgClient.PgClient>

export interface RunningEngine {
  readonly workerId: string
  /** Closes the engine's scope: stops claiming, interrupts handlers, releases their leases. */
  readonly stop: Effect.Effect<void>
}

/**
 * Starts an engine with its own connection pool (like a separate process would have) on the test
 * database. It stops when the test's scope closes, or earlier with `stop`.
 */
export const startEngine = (
  options: WorkEngineOptions & { readonly workerId: string },
  handlers: Handlers
): Effect.Effect<RunningEngine, never, DatabaseUrl | Scope.Scope> =>
  Effect.gen(function* () {
    const url = yield* DatabaseUrl
    const layer = WorkEngine.layer(options).pipe(
      Layer.provide(handlers),
      Layer.provide(WorkHandlers.layer),
      Layer.provide(pgClientLayer(url))
    )
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    // Engines log at info; the tests keep warnings and errors.
    const context = yield* Layer.buildWithScope(layer, scope).pipe(
      Effect.orDie,
      Effect.locally(FiberRef.currentMinimumLogLevel, LogLevel.Warning)
    )
    return { workerId: Context.get(context, WorkEngine).workerId, stop: Scope.close(scope, Exit.void) }
  })

/** Polls `read` every 50 ms until `done` holds; dies with the last value after `timeout`. */
export const eventually = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  done: (a: A) => boolean,
  timeout: Duration.DurationInput = Duration.seconds(20)
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const deadline = Date.now() + Duration.toMillis(Duration.decode(timeout))
    for (;;) {
      const value = yield* read
      if (done(value)) return value
      if (Date.now() > deadline) {
        return yield* Effect.dieMessage(
          `condition not reached within ${Duration.format(Duration.decode(timeout))}; last: ${JSON.stringify(value)}`
        )
      }
      yield* Effect.sleep(Duration.millis(50))
    }
  })

/** The item's status; a missing item is a defect. */
export const status = (id: string): Effect.Effect<WorkItem, SqlError, SqlClient.SqlClient> =>
  getWorkItem(id).pipe(Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage(`no work item ${id}`), onSome: Effect.succeed })))

/** Waits until the item is in one of `states`. */
export const untilState = (id: string, ...states: ReadonlyArray<WorkItem["state"]>) =>
  eventually(status(id), (item) => states.includes(item.state))

/** Every item of a kind. */
export const itemsOfKind = (kind: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`SELECT id FROM work_items WHERE kind = ${kind} ORDER BY created_at, id`
    return yield* Effect.forEach(rows, (row) => status(row.id))
  })

/**
 * Runs `effect` (e.g. `startEngine`) with an extra logger that appends each line, with its cause,
 * to `lines`; fibers forked inside (the engine's) keep it.
 */
export const captureLogs =
  (lines: Array<string>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locallyWith(
      effect,
      FiberRef.currentLoggers,
      HashSet.add(
        Logger.make(({ cause, message }) => {
          lines.push(`${JSON.stringify(message)} ${Cause.isEmpty(cause) ? "" : Cause.pretty(cause)}`)
        })
      )
    )

/** How many items of a kind are in each state. */
export const countByState = (kind: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ state: WorkItem["state"]; n: number }>`
      SELECT state, count(*)::int AS n FROM work_items WHERE kind = ${kind} GROUP BY state
    `
    const counts: Record<WorkItem["state"], number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 }
    for (const row of rows) counts[row.state] = row.n
    return counts
  })

/** Enqueues one item of `kind` per key, each due a second after the one before (oldest first). */
export const enqueueInOrder = (kind: string, keys: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids: Array<string> = []
    for (const [i, key] of keys.entries()) {
      const { item } = yield* enqueue({ kind, key })
      yield* sql`UPDATE work_items SET next_attempt_at = now() - make_interval(secs => ${100 - i}) WHERE id = ${item.id}`
      ids.push(item.id)
    }
    return ids
  })
