/**
 * PostgreSQL going away under a running process must not crash it. A terminal's Ctrl-C reaches
 * `svc start`'s embedded PostgreSQL too, which then ends every connection with a FATAL (57P01)
 * while our own shutdown still holds them. A `pg` client that emits `error` with no listener
 * throws from the socket's callback: the process dies mid-shutdown with "Unhandled 'error' event".
 *
 * Every `error` a `pg` client emits here is recorded with whether anyone listened. The recorder
 * swallows an unheard one (so that a regression fails the assertion instead of the test worker).
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { PgPool, pgPoolLayer } from "@svc/core/db"
import { Deferred, Effect, Exit, Fiber, Layer, Redacted, Schedule, Scope, Stream } from "effect"
import pg from "pg"
import { superuserQuery, TestDatabaseUrl } from "../../../testing/database.js"
import { ADMIN_SHUTDOWN, startPgProxy } from "../../../testing/pgProxy.js"

/** Records each `error` emitted by any `pg.Client` while the scope is open. */
const recordClientErrors = Effect.acquireRelease(
  Effect.sync(() => {
    const heard: Array<string> = []
    const unheard: Array<string> = []
    const emit = pg.Client.prototype.emit
    pg.Client.prototype.emit = function (this: pg.Client, event: string | symbol, ...args: Array<unknown>) {
      if (event === "error") {
        const message = args[0] instanceof Error ? args[0].message : String(args[0])
        if (this.listenerCount("error") === 0) {
          unheard.push(message)
          return false
        }
        heard.push(message)
      }
      return emit.call(this, event, ...args)
    }
    return { heard, unheard, restore: () => (pg.Client.prototype.emit = emit) }
  }),
  (recorder) => Effect.sync(recorder.restore)
)

const shutdownRacingProxy = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(() => startPgProxy(target, { fatalOnTerminate: true })),
    (proxy) => Effect.promise(proxy.close)
  )

const poolOver = (url: string) => pgPoolLayer({ url: Redacted.make(url), applicationName: "svc-test-shutdown" })

describe("PostgreSQL shutting down under the process", () => {
  it.scopedLive("a borrowed client whose backend is terminated emits only heard errors, and the pool drops it", () =>
    Effect.gen(function* () {
      const recorder = yield* recordClientErrors
      const url = yield* TestDatabaseUrl
      yield* Effect.gen(function* () {
        const pool = yield* PgPool
        // What `@effect/sql-pg` does for each statement: borrow a client from the pool.
        const client = yield* Effect.promise(() => pool.connect())
        const backend = yield* Effect.promise(() => client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))
        const ended = new Promise<void>((resolve) => client.once("end", resolve))
        yield* Effect.promise(() => superuserQuery("SELECT pg_terminate_backend($1)", [backend.rows[0]!.pid]))
        yield* Effect.promise(() => ended)
        client.release()
        expect(recorder.unheard).toEqual([])
        expect(recorder.heard).toContain(ADMIN_SHUTDOWN)
        expect(pool.totalCount).toBe(0)
        const after = yield* Effect.promise(() => pool.query<{ one: number }>("SELECT 1 AS one"))
        expect(after.rows).toEqual([{ one: 1 }])
      }).pipe(Effect.provide(poolOver(url)))
    }))

  it.scopedLive("the LISTEN connection, ending as the server ends it, emits only heard errors", () =>
    Effect.gen(function* () {
      const recorder = yield* recordClientErrors
      // A proxy that answers the client's Terminate with the FATAL a shutting-down server sends.
      const url = yield* TestDatabaseUrl
      const proxy = yield* shutdownRacingProxy(url)
      const layer = poolOver(proxy.via(url))
      yield* Effect.gen(function* () {
        const client = yield* PgClient.PgClient
        const listening = yield* Scope.make()
        const received = yield* Deferred.make<string>()
        const listener = yield* client.listen("svc_shutdown_test").pipe(
          Stream.runForEach((payload) => Deferred.succeed(received, payload)),
          Effect.forkIn(listening)
        )
        // The LISTEN is in place once a notification arrives.
        // (`PgClient.notify` sends `NOTIFY chan, $1`, which PostgreSQL does not parse.)
        yield* client`SELECT pg_notify('svc_shutdown_test', 'ping')`.pipe(
          Effect.zipRight(Deferred.await(received).pipe(Effect.timeout("200 millis"))),
          Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds")))
        )
        expect(yield* Deferred.await(received)).toBe("ping")
        // Ends the stream: UNLISTEN, then the listen connection's end, which the proxy answers
        // with the shutdown FATAL.
        yield* Scope.close(listening, Exit.void)
        expect(yield* Fiber.await(listener)).toSatisfy(Exit.isInterrupted)
        yield* Effect.sync(() => proxy.fatalsSent()).pipe(
          Effect.repeat({ until: (sent) => sent >= 1, schedule: Schedule.spaced("20 millis") }),
          Effect.timeout("10 seconds")
        )
        // The FATAL is read on the client's next turn of the event loop.
        yield* Effect.sleep("100 millis")
        expect(recorder.unheard).toEqual([])
        expect(recorder.heard).toContain(ADMIN_SHUTDOWN)
      }).pipe(Effect.provide(Layer.fresh(layer)))
    }))
})
