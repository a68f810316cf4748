import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option } from "effect"
import { PgPool } from "@svc/core/db"
import { makeLeases } from "../src/engine/leases.js"
import { enqueue } from "../src/index.js"
import { enqueueInOrder, status, TestDatabase } from "./harness.js"

/**
 * The claim function `work_claim` (migration 0019) that the engine's claims and its success +
 * next claim go through, called as the engine calls it (`makeLeases`) and, for a batch, directly.
 */
const WORKER = "claim-test-worker"

const leasesOf = Effect.zipWith(SqlClient.SqlClient, PgPool, (sql, pool) =>
  makeLeases(sql.withoutTransforms(), pool, WORKER, Duration.seconds(30), 1)
)

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("work_claim", (it) => {
  it.effect("a claim takes the oldest due item of the given kinds: running, leased, attempt counted", () =>
    Effect.gen(function* () {
      const leases = yield* leasesOf
      const [oldest, second] = yield* enqueueInOrder("claim.a", ["a1", "a2"])
      yield* enqueueInOrder("claim.other", ["o1"])
      yield* enqueue({ kind: "claim.a", key: "later", delay: "1 hour" })
      const claimed = Option.getOrThrow(yield* leases.claim(["claim.a"]))
      expect(claimed).toMatchObject({ id: oldest, kind: "claim.a", key: "a1", attempt: 1 })
      const item = yield* status(oldest!)
      expect(item).toMatchObject({ state: "running", attemptCount: 1, leaseOwner: WORKER, lastAttempt: null })
      const leaseMs = item.leaseExpiresAt!.getTime() - claimed.claimedAt.getTime()
      expect(leaseMs).toBe(30_000)
      expect(Option.getOrThrow(yield* leases.claim(["claim.a"])).id).toBe(second)
      // Nothing else of the kind is due: the delayed item is not taken.
      expect(yield* leases.claim(["claim.a"])).toEqual(Option.none())
    }))

  it.effect("a success and the next claim: the success recorded, then the next item; with none due, the success alone", () =>
    Effect.gen(function* () {
      const leases = yield* leasesOf
      const [first, second] = yield* enqueueInOrder("claim.b", ["b1", "b2"])
      const claimed = Option.getOrThrow(yield* leases.claim(["claim.b"]))
      const after = yield* leases.succeedAndClaim(claimed, ["claim.b"])
      expect(after.succeeded).toBe(true)
      expect(Option.getOrThrow(after.next)).toMatchObject({ id: second, attempt: 1 })
      expect(yield* status(first!)).toMatchObject({
        state: "succeeded",
        leaseOwner: null,
        leaseExpiresAt: null,
        attemptCount: 1,
        lastAttempt: { code: "SUCCEEDED" }
      })
      const last = yield* leases.succeedAndClaim(Option.getOrThrow(after.next), ["claim.b"])
      expect(last).toEqual({ succeeded: true, next: Option.none() })
      expect((yield* status(second!)).state).toBe("succeeded")
    }))

  it.effect("a fenced success (a later attempt, or another owner) records nothing and still claims the next item", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const leases = yield* leasesOf
      const [retaken, takenOver, last] = yield* enqueueInOrder("claim.c", ["c1", "c2", "c3"])
      const first = Option.getOrThrow(yield* leases.claim(["claim.c"]))
      // The lease expired and this same worker claimed the item again: attempt 2 holds it now.
      yield* sql`UPDATE work_items SET attempt_count = 2 WHERE id = ${retaken}`
      const afterFirst = yield* leases.succeedAndClaim(first, ["claim.c"])
      expect(afterFirst.succeeded).toBe(false)
      const second = Option.getOrThrow(afterFirst.next)
      expect(second.id).toBe(takenOver)
      // Another worker took the second item over in the same attempt number.
      yield* sql`UPDATE work_items SET lease_owner = 'other' WHERE id = ${takenOver}`
      const afterSecond = yield* leases.succeedAndClaim(second, ["claim.c"])
      expect(afterSecond.succeeded).toBe(false)
      expect(Option.getOrThrow(afterSecond.next).id).toBe(last)
      expect(yield* status(retaken!)).toMatchObject({ state: "running", leaseOwner: WORKER, attemptCount: 2, lastAttempt: null })
      expect(yield* status(takenOver!)).toMatchObject({ state: "running", leaseOwner: "other", attemptCount: 1, lastAttempt: null })
    }))

  it.effect("a batch claims up to max of the oldest due items, skipping those another transaction holds", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [held, second, third, fourth] = yield* enqueueInOrder("claim.d", ["d1", "d2", "d3", "d4"])
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* sql
        .withTransaction(
          sql`SELECT id FROM work_items WHERE id = ${held} FOR UPDATE`.pipe(
            Effect.zipRight(Deferred.succeed(locked, undefined)),
            Effect.zipRight(Deferred.await(release))
          )
        )
        .pipe(Effect.fork)
      yield* Deferred.await(locked)
      const rows = yield* sql.withoutTransforms()<{ finished: boolean | null; id: string; attempt_count: number }>`
        SELECT * FROM work_claim(${WORKER}, ${["claim.d"]}::text[], 30, 2, NULL, NULL, 'SUCCEEDED', 'unused')
      `
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      expect(rows.map((row) => row.id).sort()).toEqual([second, third].sort())
      expect(rows.map(({ attempt_count, finished }) => ({ attempt_count, finished }))).toEqual([
        { attempt_count: 1, finished: null },
        { attempt_count: 1, finished: null }
      ])
      expect((yield* status(held!)).state).toBe("queued")
      expect((yield* status(fourth!)).state).toBe("queued")
    }))
})
