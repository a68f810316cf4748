/**
 * `pgPoolLayer`: the process's `SqlClient` and `PgPool` over one `pg` pool, and
 * `preparedStatement`, the named prepared statements the work engine's claim runs as.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { PgPool, pgPoolLayer, preparedStatement } from "@svc/core/db"
import { Effect, Either, Exit, Fiber, Layer, Redacted } from "effect"
import * as net from "node:net"
import { TestDatabaseUrl } from "../../../testing/database.js"

/** A pool of one connection, so that every statement, whichever way it is sent, uses the same backend. */
const onePool = Layer.unwrapScoped(
  Effect.map(TestDatabaseUrl, (url) =>
    pgPoolLayer({ url: Redacted.make(url), applicationName: "svc-test-pool", maxConnections: 1 })
  )
)

const preparedOnBackend = (name: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ readonly name: string; readonly statement: string }>`
      SELECT name, statement FROM pg_prepared_statements WHERE name = ${name}
    `
  )

describe("pgPoolLayer", () => {
  it.scoped("SqlClient and PgPool share one pool: the same backend and application name either way", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const pool = yield* PgPool
      const viaSql = yield* sql<{ readonly pid: number; readonly app: string }>`
        SELECT pg_backend_pid() AS pid, current_setting('application_name') AS app
      `
      const viaPool = (yield* Effect.promise(() =>
        pool.query<{ pid: number; app: string }>("SELECT pg_backend_pid() AS pid, current_setting('application_name') AS app")
      )).rows
      expect(viaSql).toEqual([{ pid: viaPool[0]!.pid, app: "svc-test-pool" }])
      expect(viaPool[0]!.app).toBe("svc-test-pool")
      expect(pool.totalCount).toBe(1)
    }).pipe(Effect.provide(onePool)))

  it.live("a database that does not answer fails the layer with SqlError, not a hang", () =>
    Effect.gen(function* () {
      // A port that accepts nothing: a listener closed at once.
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const server = net.createServer()
            server.listen(0, "127.0.0.1", () => {
              const { port } = server.address() as net.AddressInfo
              server.close(() => resolve(port))
            })
          })
      )
      const layer = pgPoolLayer({
        url: Redacted.make(`postgres://nobody@127.0.0.1:${port}/none`),
        connectTimeout: "2 seconds"
      })
      const exit = yield* Effect.exit(Layer.build(layer).pipe(Effect.scoped))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause : null
      expect(JSON.stringify(error)).toContain("PgClient: Failed to connect")
    }))
})

describe("preparedStatement", () => {
  it.scoped("is prepared once per connection under its name and reused, with its parameters bound each time", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const square = preparedStatement<{ readonly n: number; readonly sq: number }>(
        pool,
        "svc_test_square",
        "SELECT $1::int AS n, ($1::int * $1::int) AS sq"
      )
      expect(yield* preparedOnBackend("svc_test_square")).toEqual([])
      expect(yield* square([3])).toEqual([{ n: 3, sq: 9 }])
      expect(yield* square([12])).toEqual([{ n: 12, sq: 144 }])
      const prepared = yield* preparedOnBackend("svc_test_square")
      expect(prepared).toEqual([{ name: "svc_test_square", statement: "SELECT $1::int AS n, ($1::int * $1::int) AS sq" }])
      // Prepared once: a third call adds no second statement, and the plan counters show reuse.
      yield* square([5])
      const sql = yield* SqlClient.SqlClient
      const [plans] = yield* sql<{ readonly calls: number }>`
        SELECT (generic_plans + custom_plans)::int AS calls FROM pg_prepared_statements WHERE name = 'svc_test_square'
      `
      expect(plans).toEqual({ calls: 3 })
    }).pipe(Effect.provide(onePool)))

  it.scoped("a failing statement is a SqlError with the driver's error as its cause; the connection serves the next one", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const divide = preparedStatement<{ readonly q: number }>(pool, "svc_test_divide", "SELECT 10 / $1::int AS q")
      const failed = yield* Effect.either(divide([0]))
      expect(Either.isLeft(failed)).toBe(true)
      const error = Either.isLeft(failed) ? failed.left : null
      expect(error).toBeInstanceOf(SqlError)
      expect(error?.message).toBe("Failed to execute statement")
      expect((error?.cause as { code?: string }).code).toBe("22012")
      expect(yield* divide([5])).toEqual([{ q: 2 }])
      expect(pool.totalCount).toBe(1)
    }).pipe(Effect.provide(onePool)))

  it.scopedLive("an interrupted call is not cancelled: the statement completes and its connection returns to the pool", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE svc_test_marks (at timestamptz NOT NULL)`
      const mark = preparedStatement(pool, "svc_test_mark", "INSERT INTO svc_test_marks SELECT now() FROM pg_sleep($1::float8)")
      const call = yield* Effect.fork(mark([0.3]))
      yield* Effect.sleep("50 millis")
      yield* Fiber.interrupt(call)
      // The next statement waits for the one connection, which the insert still holds.
      const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM svc_test_marks`
      expect(row).toEqual({ n: 1 })
      expect(pool.totalCount).toBe(1)
    }).pipe(Effect.provide(onePool)))
})
