import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Ref, Schema } from "effect"
import { enqueue, WorkHandler } from "../src/index.js"
import { countByState, eventually, itemsOfKind, startEngine, status, TestDatabase, untilState } from "./harness.js"

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("shutdown and restart", (it) => {
  it.scoped("graceful shutdown interrupts handlers and releases their leases", () =>
    Effect.gen(function* () {
      const interrupted = yield* Ref.make(0)
      const engine = yield* startEngine(
        // A long lease: only the release can free the items quickly.
        { concurrency: 2, pollInterval: "200 millis", leaseDuration: "5 minutes", workerId: "graceful" },
        WorkHandler.layer("shutdown.block", Schema.Unknown, () =>
          Effect.never.pipe(Effect.onInterrupt(() => Ref.update(interrupted, (n) => n + 1)))
        )
      )
      const a = yield* enqueue({ kind: "shutdown.block", key: "a" })
      const b = yield* enqueue({ kind: "shutdown.block", key: "b" })
      for (const { item } of [a, b]) {
        expect(yield* untilState(item.id, "running")).toMatchObject({ leaseOwner: "graceful", attemptCount: 1 })
      }

      yield* engine.stop

      expect(yield* Ref.get(interrupted)).toBe(2)
      for (const { item } of [a, b]) {
        // Back to queued at once, the withdrawn attempt not counted and nothing recorded.
        expect(yield* status(item.id)).toMatchObject({
          state: "queued",
          leaseOwner: null,
          leaseExpiresAt: null,
          attemptCount: 0,
          lastAttempt: null,
          finishedAt: null
        })
      }
      // A stopped engine claims nothing more.
      const c = yield* enqueue({ kind: "shutdown.block", key: "c" })
      yield* Effect.sleep(Duration.millis(500))
      expect(yield* status(c.item.id)).toMatchObject({ state: "queued", attemptCount: 0 })
    }))

  it.scoped("nothing is lost when an engine is stopped mid-way and another takes over", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE test_completions (item_id uuid NOT NULL, worker text NOT NULL)`
      const handler = WorkHandler.layer("shutdown.restart", Schema.Unknown, (_, ctx) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* Effect.sleep(Duration.millis(100))
          yield* sql`INSERT INTO test_completions (item_id, worker) VALUES (${ctx.id}, ${ctx.workerId})`
        }).pipe(Effect.orDie)
      )
      const count = 40
      yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
        enqueue({ kind: "shutdown.restart", key: `item-${i}` })
      )
      const options = { concurrency: 4, pollInterval: "200 millis", leaseDuration: "30 seconds" } as const
      const first = yield* startEngine({ ...options, workerId: "first" }, handler)
      // Stop the first engine part-way through the backlog, with attempts in flight.
      yield* eventually(countByState("shutdown.restart"), (counts) => counts.succeeded >= 10)
      yield* first.stop
      const between = yield* itemsOfKind("shutdown.restart")
      expect(between.filter((i) => i.state === "running")).toEqual([])
      expect(between.filter((i) => i.state === "queued").length).toBeGreaterThan(0)

      yield* startEngine({ ...options, workerId: "second" }, handler)
      yield* eventually(countByState("shutdown.restart"), (counts) => counts.succeeded === count)
      const items = yield* itemsOfKind("shutdown.restart")
      expect(items).toHaveLength(count)
      // Every item succeeded on its first counted attempt: released attempts are not counted.
      expect(items.map((i) => i.attemptCount)).toEqual(Array.from({ length: count }, () => 1))
      const completions = yield* sql<{ item_id: string; n: number }>`
        SELECT item_id, count(*)::int AS n FROM test_completions GROUP BY item_id
      `
      // Every item's handler completed; at most the attempts cut short by the stop ran again.
      expect(completions).toHaveLength(count)
      const extra = completions.reduce((sum, c) => sum + c.n - 1, 0)
      expect(extra).toBeLessThanOrEqual(options.concurrency)
      const workers = yield* sql<{ worker: string }>`SELECT DISTINCT worker FROM test_completions ORDER BY worker`
      expect(workers.map((w) => w.worker)).toEqual(["first", "second"])
    }))
})
