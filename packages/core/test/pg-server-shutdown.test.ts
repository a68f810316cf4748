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
import * as net from "node:net"
import pg from "pg"
import { superuserQuery, TestDatabaseUrl } from "../../../testing/database.js"

const ADMIN_SHUTDOWN = "terminating connection due to administrator command"

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

/** A FATAL ErrorResponse as PostgreSQL's fast shutdown sends it to each backend's client. */
const adminShutdownMessage = (): Buffer => {
  const fields = Buffer.concat(
    [["S", "FATAL"], ["V", "FATAL"], ["C", "57P01"], ["M", ADMIN_SHUTDOWN]].map(([code, value]) =>
      Buffer.concat([Buffer.from(code!), Buffer.from(`${value}\0`)])
    )
  )
  const body = Buffer.concat([fields, Buffer.from([0])])
  const header = Buffer.alloc(5)
  header.write("E", 0)
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

/**
 * A loopback proxy to the real server that answers a client's Terminate (`X`) with the FATAL a
 * shutting-down server sends, then closes: the race of a Ctrl-C, made deterministic.
 */
const shutdownRacingProxy = (target: URL) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: net.Server; readonly port: number; readonly fatalsSent: () => number }>((resume) => {
      let fatals = 0
      const server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port), target.hostname)
        upstream.pipe(client)
        upstream.on("error", () => client.destroy())
        client.on("error", () => upstream.destroy())
        let pending = Buffer.alloc(0)
        let startup = true
        client.on("data", (chunk: Buffer) => {
          pending = Buffer.concat([pending, chunk])
          for (;;) {
            // The startup message has no type byte; every later message does.
            const headerLength = startup ? 4 : 5
            if (pending.length < headerLength) return
            const length = pending.readInt32BE(startup ? 0 : 1) + (startup ? 0 : 1)
            if (pending.length < length) return
            const type = startup ? "" : String.fromCharCode(pending[0]!)
            const message = pending.subarray(0, length)
            pending = pending.subarray(length)
            startup = false
            if (type === "X") {
              fatals++
              upstream.unpipe(client)
              upstream.destroy()
              client.end(adminShutdownMessage())
              return
            }
            upstream.write(message)
          }
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ server, port: (server.address() as net.AddressInfo).port, fatalsSent: () => fatals }))
      )
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
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
      const target = new URL(yield* TestDatabaseUrl)
      const proxy = yield* shutdownRacingProxy(target)
      const viaProxy = new URL(target)
      viaProxy.host = `127.0.0.1:${proxy.port}`
      const layer = poolOver(viaProxy.toString())
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
