/**
 * Scenarios for interrupted statements (pg-interruption.test.ts): a pool the test can watch, and a
 * control session outside it whose advisory locks decide when each statement ends, so every step
 * of a race is waited for as state rather than timed.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Fiber } from "effect"
import pg from "pg"
import { TestDatabaseUrl } from "../../../../testing/database.js"
import { until } from "../../../../testing/poll.js"

export interface Scenario {
  readonly pool: pg.Pool
  /** Takes session advisory lock `key` on the control session: a statement waiting for it runs until `release`. */
  readonly hold: (key: number) => Effect.Effect<void>
  readonly release: (key: number) => Effect.Effect<void>
  /** Waits until `count` backends wait for advisory lock `key`. */
  readonly waitingFor: (key: number, count: number) => Effect.Effect<void>
  /** Waits until `count` borrowers wait for a connection of the pool. */
  readonly queued: (count: number) => Effect.Effect<void>
  /** Waits until the pool holds `count` idle connections (nothing borrowed, nothing deferred). */
  readonly idle: (count: number) => Effect.Effect<void>
  /** Holds lock `key` and forks a statement that waits for it; returns once the statement runs on the server. */
  readonly blocked: <A extends object>(
    key: number,
    statement: Effect.Effect<ReadonlyArray<A>, SqlError, SqlClient.SqlClient>
  ) => Effect.Effect<Fiber.RuntimeFiber<ReadonlyArray<A>, SqlError>, never, SqlClient.SqlClient>
}

const control = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end())
  )

export interface ScenarioOptions {
  /**
   * The pool's `pg_cancel_backend` waits for this advisory lock before it signals: a function of
   * that name in a schema searched before pg_catalog, so a cancel stays on its way while the test
   * holds the lock.
   */
  readonly cancelWaitsFor?: number | undefined
}

const holdCancels = (session: pg.Client, key: number) =>
  Effect.promise(() =>
    session.query(`CREATE SCHEMA cancel_hold;
      CREATE FUNCTION cancel_hold.pg_cancel_backend(pid integer) RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(${key});
        RETURN pg_catalog.pg_cancel_backend(pid);
      END $$`)
  )

const watchedPool = (url: string, max: number, options: ScenarioOptions) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new pg.Pool({
        connectionString: url,
        max,
        application_name: "svc-test-interruption",
        ...(options.cancelWaitsFor === undefined ? {} : { options: "-c search_path=cancel_hold,pg_catalog,public" })
      })
      pool.on("error", () => undefined)
      return pool
    }),
    (pool) => Effect.promise(() => pool.end())
  )

/**
 * Runs `body` against a fresh database through `@effect/sql-pg` on a pool of `max` connections.
 * `PgClient.layerFromPool` runs the same statement and cancel code as `PgClient.layer` (the
 * service's `databaseLayer`); only the pool is the test's, so that its queue can be watched.
 */
export const withScenario = <A, E>(
  max: number,
  body: (scenario: Scenario) => Effect.Effect<A, E, SqlClient.SqlClient>,
  options: ScenarioOptions = {}
) =>
  Effect.gen(function* () {
    const url = yield* TestDatabaseUrl
    const session = yield* control(url)
    if (options.cancelWaitsFor !== undefined) yield* holdCancels(session, options.cancelWaitsFor)
    const pool = yield* watchedPool(url, max, options)
    // Runs before the pool ends (which waits for its statements): a failed test leaves none blocked.
    yield* Effect.addFinalizer(() => Effect.promise(() => session.query("SELECT pg_advisory_unlock_all()")))
    const run = (text: string, key: number) => Effect.promise(() => session.query(text, [key])).pipe(Effect.asVoid)
    const poll = <B>(read: () => B, done: (b: B) => boolean) => until(Effect.sync(read), done, 60).pipe(Effect.asVoid)
    const hold = (key: number) => run("SELECT pg_advisory_lock($1)", key)
    const waitingFor = (key: number, count: number) =>
      until(
        Effect.promise(() =>
          session.query<{ count: number }>(
            "SELECT count(*)::int AS count FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted",
            [key]
          )
        ),
        (result) => result.rows[0]?.count === count,
        60
      ).pipe(Effect.asVoid)
    const scenario: Scenario = {
      pool,
      hold,
      release: (key) => run("SELECT pg_advisory_unlock($1)", key),
      waitingFor,
      blocked: (key, statement) =>
        Effect.gen(function* () {
          yield* hold(key)
          const fiber = yield* Effect.fork(statement)
          yield* waitingFor(key, 1)
          return fiber
        }),
      queued: (count) => poll(() => pool.waitingCount, (n) => n === count),
      idle: (count) => poll(() => pool.idleCount, (n) => n === count)
    }
    return yield* body(scenario).pipe(Effect.provide(PgClient.layerFromPool({ acquire: Effect.succeed(pool) })))
  }).pipe(Effect.scoped)
