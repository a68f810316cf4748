import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Random, Ref, Schema } from "effect"
import { enqueue, WorkHandler } from "../src/index.js"
import { startPgProxy } from "../../../testing/pgProxy.js"
import { captureLogs, countByState, DatabaseUrl, eventually, itemsOfKind, startEngine, status, TestDatabase, untilState } from "./harness.js"

const runsTable = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS test_runs (
      item_id uuid NOT NULL,
      worker text NOT NULL,
      started_at timestamptz NOT NULL,
      ended_at timestamptz
    )
  `
})

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("leases", (it) => {
  it.scoped("two workers on one database never run an item at once, and each item runs exactly once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* runsTable
      // Both engines live in this process: a shared set catches any overlap directly.
      const running = new Set<string>()
      const overlaps: Array<string> = []
      const handler = WorkHandler.layer("lease.shared", Schema.Unknown, (_, ctx) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          if (running.has(ctx.id)) overlaps.push(ctx.id)
          running.add(ctx.id)
          yield* sql`INSERT INTO test_runs (item_id, worker, started_at) VALUES (${ctx.id}, ${ctx.workerId}, clock_timestamp())`
          yield* Effect.sleep(Duration.millis(yield* Random.nextIntBetween(5, 25)))
          yield* sql`UPDATE test_runs SET ended_at = clock_timestamp() WHERE item_id = ${ctx.id} AND worker = ${ctx.workerId}`
          running.delete(ctx.id)
        }).pipe(Effect.orDie)
      )
      const options = { concurrency: 3, pollInterval: "200 millis", leaseDuration: "10 seconds" } as const
      yield* startEngine({ ...options, workerId: "worker-a" }, handler)
      yield* startEngine({ ...options, workerId: "worker-b" }, handler)

      const count = 60
      yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
        enqueue({ kind: "lease.shared", key: `item-${i}`, payload: { i } })
      )
      yield* eventually(countByState("lease.shared"), (counts) => counts.succeeded === count)
      const items = yield* itemsOfKind("lease.shared")
      expect(items).toHaveLength(count)
      expect(items.every((item) => item.attemptCount === 1)).toBe(true)
      expect(overlaps).toEqual([])

      const runs = yield* sql<{ item_id: string; worker: string; started_at: Date; ended_at: Date | null }>`
        SELECT item_id, worker, started_at, ended_at FROM test_runs ORDER BY started_at
      `
      expect(runs).toHaveLength(count)
      expect(new Set(runs.map((r) => r.item_id)).size).toBe(count)
      expect(runs.every((r) => r.ended_at !== null)).toBe(true)
      // Both workers took part, and neither ran more than its 3 slots at once.
      const byWorker = (worker: string) => runs.filter((r) => r.worker === worker)
      for (const worker of ["worker-a", "worker-b"]) {
        const mine = byWorker(worker)
        expect(mine.length).toBeGreaterThan(0)
        const maxParallel = Math.max(
          ...mine.map((r) => mine.filter((o) => o.started_at <= r.started_at && o.ended_at! > r.started_at).length)
        )
        expect(maxParallel).toBeLessThanOrEqual(3)
      }
    }))

  it.scoped("the lease is renewed while a handler runs longer than the lease", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const started = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const handler = WorkHandler.layer("lease.long", Schema.Unknown, () =>
        Ref.update(calls, (n) => n + 1).pipe(
          Effect.zipRight(Deferred.succeed(started, undefined)),
          Effect.zipRight(Deferred.await(finish))
        )
      )
      const options = {
        concurrency: 1,
        pollInterval: "200 millis",
        leaseDuration: "2 seconds",
        leaseRenewInterval: "300 millis",
        reapInterval: "200 millis"
      } as const
      yield* startEngine({ ...options, workerId: "long-a" }, handler)
      yield* startEngine({ ...options, workerId: "long-b" }, handler)
      const { item } = yield* enqueue({ kind: "lease.long", key: "k1" })
      yield* Deferred.await(started)
      const first = yield* status(item.id)
      // Hold the item for well over two lease durations; the lease keeps moving forward.
      const later = yield* eventually(
        status(item.id),
        (now) => now.leaseExpiresAt !== null && now.leaseExpiresAt.getTime() > first.leaseExpiresAt!.getTime() + 3000
      )
      expect(later).toMatchObject({ state: "running", attemptCount: 1, leaseOwner: first.leaseOwner })
      yield* Deferred.succeed(finish, undefined)
      const done = yield* untilState(item.id, "succeeded", "failed")
      expect(done).toMatchObject({ state: "succeeded", attemptCount: 1 })
      expect(yield* Ref.get(calls)).toBe(1)
    }))

  it.scoped("a worker that lost its lease cannot record its outcome", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const started = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const logged: Array<string> = []
      yield* startEngine(
        // Renewal far apart: the worker does not notice the takeover before finishing.
        { concurrency: 1, pollInterval: "200 millis", leaseDuration: "30 seconds", leaseRenewInterval: "20 seconds", workerId: "stale" },
        WorkHandler.layer("lease.fenced", Schema.Unknown, () =>
          Deferred.succeed(started, undefined).pipe(Effect.zipRight(Deferred.await(finish)))
        )
      ).pipe(captureLogs(logged))
      const { item } = yield* enqueue({ kind: "lease.fenced", key: "k1" })
      yield* Deferred.await(started)
      // What the reaper and another worker would do after this lease expired: a new claim.
      yield* sql`
        UPDATE work_items SET lease_owner = 'thief', attempt_count = attempt_count + 1,
          lease_expires_at = now() + interval '1 hour'
        WHERE id = ${item.id}
      `
      yield* Deferred.succeed(finish, undefined)
      // The stale worker tries to record its success and is fenced off; the row stays the thief's.
      yield* eventually(
        Effect.sync(() => logged.join("\n")),
        (text) => text.includes("work lease lost before the outcome was recorded")
      )
      expect(yield* status(item.id)).toMatchObject({
        state: "running",
        leaseOwner: "thief",
        attemptCount: 2,
        lastAttempt: null,
        finishedAt: null
      })
      yield* sql`UPDATE work_items SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = ${item.id}`
    }))

  it.scoped("a handler whose lease was taken over is interrupted at the next renewal", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      yield* startEngine(
        { concurrency: 1, pollInterval: "200 millis", leaseDuration: "30 seconds", leaseRenewInterval: "200 millis", workerId: "loser" },
        WorkHandler.layer("lease.lost", Schema.Unknown, () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
        )
      )
      const { item } = yield* enqueue({ kind: "lease.lost", key: "k1" })
      yield* Deferred.await(started)
      yield* sql`
        UPDATE work_items SET lease_owner = 'winner', attempt_count = attempt_count + 1 WHERE id = ${item.id}
      `
      yield* Deferred.await(interrupted)
      expect(yield* status(item.id)).toMatchObject({ state: "running", leaseOwner: "winner", attemptCount: 2 })
      yield* sql`UPDATE work_items SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = ${item.id}`
    }))

  it.scoped("a worker cut off from the database stops its handler once its lease may have expired, writing nothing", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const url = yield* DatabaseUrl
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startPgProxy(url)),
        (proxy) => Effect.promise(proxy.close)
      )
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      yield* startEngine(
        { concurrency: 1, pollInterval: "200 millis", leaseDuration: "3 seconds", leaseRenewInterval: "300 millis", workerId: "cut-off" },
        WorkHandler.layer("lease.cut", Schema.Unknown, () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
        )
      ).pipe(Effect.provideService(DatabaseUrl, proxy.via(url)))
      const { item } = yield* enqueue({ kind: "lease.cut", key: "k1" })
      yield* Deferred.await(started)
      // The database is still there for everyone else: only this worker's connections are cut.
      proxy.cut()
      yield* Deferred.await(interrupted).pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the handler ran on without a lease") })
      )
      // Stopped without the database: the item is as the last renewal left it, its lease expiring.
      expect(yield* status(item.id)).toMatchObject({ state: "running", leaseOwner: "cut-off", attemptCount: 1 })
      yield* sql`UPDATE work_items SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = ${item.id}`
    }))

  it.scoped("a notification wakes an idle worker without waiting for the poll", () =>
    Effect.gen(function* () {
      const done = yield* Deferred.make<void>()
      yield* startEngine(
        // Polling once a minute: only LISTEN/NOTIFY can make this test finish in time.
        { concurrency: 2, pollInterval: "60 seconds", workerId: "listener" },
        WorkHandler.layer("lease.notify", Schema.Unknown, () => Deferred.succeed(done, undefined))
      )
      // Let the slots run their first (empty) claim and go idle.
      yield* Effect.sleep(Duration.millis(500))
      const { item } = yield* enqueue({ kind: "lease.notify", key: "k1" })
      yield* Deferred.await(done).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("not woken") }))
      expect((yield* untilState(item.id, "succeeded")).attemptCount).toBe(1)
    }))

  it.scoped("after its LISTEN connection is lost, the worker listens again and is woken by the next notification", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const done = yield* Deferred.make<void>()
      yield* startEngine(
        // Polling once a minute: only LISTEN/NOTIFY can make this test finish in time.
        { concurrency: 2, pollInterval: "60 seconds", workerId: "relistener" },
        WorkHandler.layer("lease.relisten", Schema.Unknown, () => Deferred.succeed(done, undefined))
      )
      const listeners = sql<{ pid: number }>`
        SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()
      `
      const [first] = yield* eventually(listeners, (rows) => rows.length === 1)
      // What a PostgreSQL restart or a proxy dropping the idle connection does to it.
      yield* sql`SELECT pg_terminate_backend(${first!.pid})`
      const [second] = yield* eventually(listeners, (rows) => rows.length === 1 && rows[0]!.pid !== first!.pid)
      expect(second!.pid).not.toBe(first!.pid)
      // The slots went idle after the reconnection's own wake-up found nothing.
      yield* Effect.sleep(Duration.millis(500))
      const { item } = yield* enqueue({ kind: "lease.relisten", key: "k1" })
      yield* Deferred.await(done).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("not woken") }))
      expect((yield* untilState(item.id, "succeeded")).attemptCount).toBe(1)
    }))

  it.scoped("a delayed item runs once due, not before", () =>
    Effect.gen(function* () {
      const claimed = yield* Deferred.make<{ scheduledAt: Date; claimedAt: Date }>()
      yield* startEngine(
        { concurrency: 1, pollInterval: "60 seconds", workerId: "delayed" },
        WorkHandler.layer("lease.delayed", Schema.Unknown, (_, ctx) =>
          Deferred.succeed(claimed, { scheduledAt: ctx.scheduledAt, claimedAt: ctx.claimedAt })
        )
      )
      const { item } = yield* enqueue({ kind: "lease.delayed", key: "k1", delay: "1 second" })
      const at = yield* Deferred.await(claimed).pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("delayed item never ran") })
      )
      expect(at.scheduledAt.getTime() - item.createdAt.getTime()).toBe(1000)
      expect(at.claimedAt.getTime()).toBeGreaterThanOrEqual(at.scheduledAt.getTime())
      expect((yield* untilState(item.id, "succeeded")).attemptCount).toBe(1)
    }))
})
