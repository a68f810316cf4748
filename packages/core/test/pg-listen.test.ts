/**
 * `listenReconnecting`: a LISTEN that survives its connection. `PgClient.listen` keeps one
 * connection and ignores its errors, so after PostgreSQL restarts it silently delivers nothing.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { listenReconnecting, type ListenEvent, pgPoolLayer } from "@svc/core/db"
import { Effect, Fiber, Layer, Queue, Redacted, Schedule, Stream } from "effect"
import { TestDatabaseUrl } from "../../../testing/database.js"

const CHANNEL = "svc_listen_test"
const APP = "svc-test-listen"

const database = Layer.unwrapScoped(
  Effect.map(TestDatabaseUrl, (url) => pgPoolLayer({ url: Redacted.make(url), applicationName: "svc-test-listen-pool" }))
)

const listenBackends = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ pid: number; query: string }>`
    SELECT pid, query FROM pg_stat_activity WHERE application_name = ${APP} AND datname = current_database()
  `
)

const notify = (payload: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_notify(${CHANNEL}, ${payload})`)

/** The next event, or a failure naming what was awaited. */
const next = (events: Queue.Dequeue<ListenEvent>, what: string) =>
  Queue.take(events).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error(`no ${what}`) }))

describe("listenReconnecting", () => {
  it.scopedLive("announces Listening, delivers notifications, and after its connection is terminated does both again", () =>
    Effect.gen(function* () {
      const events = yield* Queue.unbounded<ListenEvent>()
      const consumer = yield* listenReconnecting(CHANNEL, APP).pipe(
        Stream.runForEach((event) => Queue.offer(events, event)),
        Effect.fork
      )
      expect(yield* next(events, "Listening")).toEqual({ _tag: "Listening" })
      yield* notify("one")
      expect(yield* next(events, "notification")).toEqual({ _tag: "Notification", payload: "one" })

      const [before] = yield* listenBackends
      expect(before!.query).toBe(`LISTEN "${CHANNEL}"`)
      // What a PostgreSQL restart or a proxy dropping the idle connection does to it.
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_terminate_backend(${before!.pid})`)
      expect(yield* next(events, "Listening after the reconnection")).toEqual({ _tag: "Listening" })
      const [after] = yield* listenBackends
      expect(after!.pid).not.toBe(before!.pid)
      yield* notify("two")
      expect(yield* next(events, "notification after the reconnection")).toEqual({ _tag: "Notification", payload: "two" })

      // Other channels and empty payloads are not delivered.
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_notify('svc_other_channel', 'x'), pg_notify(${CHANNEL}, '')`)
      yield* notify("three")
      expect(yield* next(events, "notification")).toEqual({ _tag: "Notification", payload: "three" })

      // Ending the stream ends its connection.
      yield* Fiber.interrupt(consumer)
      const left = yield* listenBackends.pipe(
        Effect.filterOrFail((rows) => rows.length === 0, (rows) => new Error(`still connected: ${JSON.stringify(rows)}`)),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds")))
      )
      expect(left).toEqual([])
    }).pipe(Effect.provide(database)))
})
