/**
 * Interrupting a fiber whose statement is on the wire (a client that disconnected mid-request).
 * `@effect/sql-pg` cancels the statement with `pg_cancel_backend(pid)` from another connection;
 * PostgreSQL's cancel names a backend, not a statement, so the connection must not serve anyone
 * else until the cancel has returned and the interrupted statement has answered. Patched in
 * patches/@effect+sql-pg+0.53.0.patch; docs/decisions/http-pipeline.md "Client disconnects".
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { databaseLayer } from "@svc/core/db"
import { Effect, Either, Exit, Fiber, Layer, Redacted } from "effect"
import { TestDatabaseUrl } from "../../../testing/database.js"
import { withScenario } from "./support/cancelScenario.js"

describe("interrupting a statement", () => {
  it.live("a cancel still on its way when the statement completes never reaches the next borrower", () =>
    withScenario(2, (s) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* s.hold(3)
        const interrupted = yield* s.blocked(1, sql`SELECT 'a' AS a FROM pg_advisory_xact_lock(1)`)
        const other = yield* s.blocked(2, sql`SELECT 'c' AS c FROM pg_advisory_xact_lock(2)`)
        // Both connections are busy: the innocent statement waits for one.
        const innocent = yield* Effect.fork(sql`SELECT 'innocent' AS innocent FROM pg_advisory_xact_lock(3)`)
        yield* s.queued(1)
        const interruption = yield* Effect.fork(Fiber.interrupt(interrupted))
        // The cancel waits for a connection too, behind the innocent statement.
        yield* s.queued(2)
        // The interrupted statement completes; its connection goes to the innocent statement.
        yield* s.release(1)
        yield* s.waitingFor(3, 1)
        // The other statement completes; its connection is free for the cancel.
        yield* s.release(2)
        expect(Exit.isInterrupted(yield* Fiber.join(interruption))).toBe(true)
        expect(yield* Fiber.join(other)).toEqual([{ c: "c" }])
        yield* s.release(3)
        expect(yield* Fiber.await(innocent)).toEqual(Exit.succeed([{ innocent: "innocent" }]))
        yield* s.idle(2)
      })
    ), 120_000)

  it.live("a connection whose statement answered waits for the cancel still on its way", () =>
    withScenario(
      2,
      (s) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* s.hold(3)
          yield* s.hold(4)
          const interrupted = yield* s.blocked(1, sql`SELECT 'a' AS a FROM pg_advisory_xact_lock(1)`)
          const interruption = yield* Effect.fork(Fiber.interrupt(interrupted))
          // The cancel runs on the other connection and waits for lock 4 before it signals.
          yield* s.waitingFor(4, 1)
          // The interrupted statement completes meanwhile: its connection is not handed out.
          yield* s.release(1)
          yield* s.waitingFor(1, 0)
          const innocent = yield* Effect.fork(sql`SELECT 'innocent' AS innocent FROM pg_advisory_xact_lock(3)`)
          yield* s.queued(1)
          // The signal finds that backend idle; once the cancel returned, the innocent statement gets it.
          yield* s.release(4)
          expect(Exit.isInterrupted(yield* Fiber.join(interruption))).toBe(true)
          yield* s.waitingFor(3, 1)
          yield* s.release(3)
          expect(yield* Fiber.await(innocent)).toEqual(Exit.succeed([{ innocent: "innocent" }]))
          yield* s.idle(2)
        }),
      { cancelWaitsFor: 4 }
    ), 120_000)

  it.live("a statement still running is cancelled on the server, and its connection is reused after its answer", () =>
    withScenario(2, (s) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const interrupted = yield* s.blocked(1, sql`SELECT 'a' AS a FROM pg_advisory_xact_lock(1)`)
        expect(Exit.isInterrupted(yield* Fiber.interrupt(interrupted))).toBe(true)
        // The lock is still held by the test, yet nobody waits for it any more: the statement was cancelled.
        yield* s.waitingFor(1, 0)
        // Its connection came back once the cancelled statement answered (57014), beside the cancel's.
        yield* s.idle(2)
        const both = yield* Effect.all([sql`SELECT 1 AS one`, sql`SELECT 2 AS two`], { concurrency: "unbounded" })
        expect(both).toEqual([[{ one: 1 }], [{ two: 2 }]])
      })
    ), 120_000)

  it.live("a cancel that could not be sent before the statement completed is not sent at all", () =>
    // One connection: the cancel can only get it once the interrupted statement gave it back.
    withScenario(1, (s) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const interrupted = yield* s.blocked(1, sql`SELECT 'a' AS a FROM pg_advisory_xact_lock(1)`)
        const interruption = yield* Effect.fork(Fiber.interrupt(interrupted))
        yield* s.queued(1)
        yield* s.release(1)
        expect(Exit.isInterrupted(yield* Fiber.join(interruption))).toBe(true)
        yield* s.idle(1)
        expect(yield* sql`SELECT 1 AS one`).toEqual([{ one: 1 }])
      })
    ), 120_000)

  it.live("an interrupted statement in a transaction is cancelled and the transaction rolls back", () =>
    withScenario(2, (s) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE marker (n int NOT NULL)`
        const interrupted = yield* s.blocked(
          1,
          sql.withTransaction(
            Effect.zipRight(sql`INSERT INTO marker VALUES (1)`, sql`SELECT 'a' AS a FROM pg_advisory_xact_lock(1)`)
          )
        )
        expect(Exit.isInterrupted(yield* Fiber.interrupt(interrupted))).toBe(true)
        yield* s.waitingFor(1, 0)
        yield* s.idle(2)
        expect(yield* sql`SELECT count(*)::int AS count FROM marker`).toEqual([{ count: 0 }])
      })
    ), 120_000)
})

describe("the service's pool (databaseLayer)", () => {
  const database = Layer.unwrapScoped(
    Effect.map(TestDatabaseUrl, (url) =>
      databaseLayer({ url: Redacted.make(url), applicationName: "svc-test-interruption", maxConnections: 3 })
    )
  )

  it.live("never fails another statement, however an interruption falls against a statement's end", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const failures: Array<string> = []
      for (let round = 0; round < 60; round++) {
        const short = yield* Effect.fork(sql`SELECT pg_sleep(0.005)`)
        // Interrupt before, around and after the statement's end (5 ms on the server).
        yield* Effect.sleep(`${round % 12} millis`)
        yield* Fiber.interrupt(short)
        const others = yield* Effect.all(
          Array.from({ length: 3 }, () => Effect.either(sql<{ one: number }>`SELECT 1 AS one`)),
          { concurrency: "unbounded" }
        )
        for (const other of others) {
          if (Either.isLeft(other)) failures.push(String(other.left.cause))
          else expect(other.right).toEqual([{ one: 1 }])
        }
      }
      expect(failures).toEqual([])
    }).pipe(Effect.provide(database)), 120_000)
})
