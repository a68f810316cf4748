/**
 * An interrupted statement is never cancelled on the server (packages/core/src/db/pg.ts): the
 * library's `pg_cancel_backend` names a backend, not a statement, and could land on the next
 * borrower's statement once the connection went back to the pool. The interrupted fiber stops
 * waiting at once; the statement finishes; every other statement on the pool succeeds.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { databaseLayer } from "@svc/core/db"
import { Effect, Exit, Fiber, Layer, Redacted } from "effect"
import { createDatabase, dropDatabase, superuserQuery } from "../../../testing/database.js"
import { until } from "../../../testing/poll.js"

const database = Layer.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(Effect.promise(createDatabase), (url) => Effect.promise(() => dropDatabase(url))),
    (url) => databaseLayer({ url: Redacted.make(url), applicationName: "svc-test-interruption", maxConnections: 3 })
  )
)

describe("interrupting a statement", () => {
  it.live("stops the fiber's wait without cancelling the statement on the server", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE marker (n int NOT NULL)`
      const slow = yield* Effect.fork(sql`WITH s AS (SELECT pg_sleep(0.6)) INSERT INTO marker SELECT 1 FROM s`)
      yield* Effect.sleep("150 millis")
      const exit = yield* Fiber.interrupt(slow)
      expect(Exit.isInterrupted(exit)).toBe(true)
      // Still running on the server when the fiber gave up (seen from another session).
      const active = yield* Effect.promise(() =>
        superuserQuery("SELECT count(*)::int AS count FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'WITH s AS (SELECT pg_sleep(0.6))%'")
      )
      expect(active.rows).toEqual([{ count: 1 }])
      const rows = yield* until(sql<{ count: number }>`SELECT count(*)::int AS count FROM marker`, (r) => r[0]!.count === 1, 10)
      expect(rows[0]!.count).toBe(1)
    }).pipe(Effect.provide(database)))

  it.live("never fails another statement, however the interruption falls against the statement's end", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const failures: Array<string> = []
      for (let round = 0; round < 40; round++) {
        const short = yield* Effect.fork(sql`SELECT pg_sleep(0.005)`)
        // Interrupt before, around and after the statement's end (5 ms on the server).
        yield* Effect.sleep(`${round % 10} millis`)
        yield* Fiber.interrupt(short)
        const others = yield* Effect.all(
          Array.from({ length: 3 }, () => Effect.either(sql<{ one: number }>`SELECT 1 AS one`)),
          { concurrency: "unbounded" }
        )
        for (const other of others) {
          if (other._tag === "Left") failures.push(String(other.left.cause))
          else expect(other.right).toEqual([{ one: 1 }])
        }
      }
      expect(failures).toEqual([])
    }).pipe(Effect.provide(database)), 60_000)
})
