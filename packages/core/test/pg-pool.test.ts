/**
 * `pgPoolLayer`: the process's `SqlClient` and `PgPool` over one `pg` pool, on which the work
 * engine sends its claim as a named prepared statement.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { PgPool, pgPoolLayer } from "@svc/core/db"
import { Effect, Exit, Layer, Redacted } from "effect"
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

describe("named statements on PgPool", () => {
  it.scoped("are prepared once per connection under their name and reused, with their parameters bound each time", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const square = (n: number) =>
        Effect.promise(() =>
          pool.query<{ n: number; sq: number }>({
            name: "svc_test_square",
            text: "SELECT $1::int AS n, ($1::int * $1::int) AS sq",
            values: [n]
          })
        ).pipe(Effect.map((result) => result.rows))
      expect(yield* preparedOnBackend("svc_test_square")).toEqual([])
      expect(yield* square(3)).toEqual([{ n: 3, sq: 9 }])
      expect(yield* square(12)).toEqual([{ n: 12, sq: 144 }])
      // The SqlClient's statements run on the same connection and see the prepared statement.
      const prepared = yield* preparedOnBackend("svc_test_square")
      expect(prepared).toEqual([{ name: "svc_test_square", statement: "SELECT $1::int AS n, ($1::int * $1::int) AS sq" }])
      yield* square(5)
      const sql = yield* SqlClient.SqlClient
      const [plans] = yield* sql<{ readonly calls: number }>`
        SELECT (generic_plans + custom_plans)::int AS calls FROM pg_prepared_statements WHERE name = 'svc_test_square'
      `
      expect(plans).toEqual({ calls: 3 })
    }).pipe(Effect.provide(onePool)))
})
