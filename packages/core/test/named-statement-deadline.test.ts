/**
 * A named statement waits for its answer at most the pool's `statementDeadline`: a database that
 * stops answering with its connections open (frozen here by a loopback proxy that stops
 * forwarding) fails the statement with an `SqlError` that reads as "database unavailable" (503 on
 * a request) instead of holding it until the database answers; the pool drops that connection,
 * and once the database answers again the next statement is served on a fresh one.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { isDatabaseUnavailable, PgPool, pgPoolLayer, queryNamed } from "@svc/core/db"
import { Context, type Duration, Effect, Either, Layer, Redacted } from "effect"
import { TestDatabaseUrl } from "../../../testing/database.js"
import { type PgProxy, startPgProxy } from "../../../testing/pgProxy.js"

/** A pool of one connection, open for the test's scope. */
const poolOf = (url: string, statementDeadline: Duration.DurationInput) =>
  Effect.map(Layer.build(pgPoolLayer({ url: Redacted.make(url), maxConnections: 1, statementDeadline })), (context) => Context.get(context, PgPool))

const backendPid = (pool: import("pg").Pool) => queryNamed<{ readonly pid: number }>(pool, "SELECT pg_backend_pid() AS pid", [])

describe("the deadline of named statements", () => {
  it.scoped("a frozen database fails the statement at the deadline; its connection is dropped, and a fresh one serves after", () =>
    Effect.gen(function* () {
      const url = yield* TestDatabaseUrl
      const proxy: PgProxy = yield* Effect.acquireRelease(Effect.promise(() => startPgProxy(url)), (p) => Effect.promise(() => p.close()))
      const pool = yield* poolOf(proxy.via(url), "1 second")
      const [before] = yield* backendPid(pool)

      proxy.freeze()
      const started = Date.now()
      const result = yield* Effect.either(queryNamed(pool, "SELECT $1::int AS n", [1]))
      const waited = Date.now() - started
      expect(Either.isLeft(result)).toBe(true)
      const error = Either.isLeft(result) ? result.left : null
      expect(error).toBeInstanceOf(SqlError)
      expect(error?.message).toBe("The database did not answer in time")
      expect(isDatabaseUnavailable(error)).toBe(true)
      // At the deadline, not when the database answers (it never does while frozen).
      expect(waited).toBeGreaterThanOrEqual(950)
      expect(pool.totalCount).toBe(0)

      proxy.thaw()
      const [after] = yield* backendPid(pool)
      expect(after!.pid).not.toBe(before!.pid)
      expect(yield* queryNamed(pool, "SELECT $1::int AS n", [7])).toEqual([{ n: 7 }])
    }), 30_000)

  it.scoped("a statement that answers in time is not affected, on the same connection", () =>
    Effect.gen(function* () {
      const url = yield* TestDatabaseUrl
      const pool = yield* poolOf(url, "2 seconds")
      const [first] = yield* backendPid(pool)
      expect(yield* queryNamed(pool, "SELECT pg_sleep(0.5), $1::int AS n", [3])).toEqual([{ pg_sleep: "", n: 3 }])
      const [second] = yield* backendPid(pool)
      expect(second!.pid).toBe(first!.pid)
    }))
})
