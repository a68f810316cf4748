import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { expect, layer } from "@effect/vitest"
import { PgPool } from "@svc/core/db"
import { Deferred, Duration, Effect, Either, Fiber, Option } from "effect"
import type pg from "pg"
import { type ClaimedItem, makeLeases } from "../src/engine/leases.js"
import { enqueueInOrder, eventually, status, TestDatabase } from "./harness.js"

/**
 * `work_claim_batch` (migration 0020) and the engine's coalescing of its slots' claims
 * (`claimBatch.ts`): requests made in the same turn of the event loop share one call, each with
 * its own answer.
 */
const WORKER = "batch-test-worker"

/**
 * The functions the named prepared statements sent on the pool while `effect` runs call
 * (`work_claim` or `work_claim_batch`); an unnamed statement counts as "unnamed".
 */
const namesSent = <A, E, R>(pool: pg.Pool, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const names: Array<string> = []
      const original = pool.query
      pool.query = function (this: pg.Pool, ...args: Array<unknown>) {
        const config = args[0] as { readonly name?: string; readonly text?: string } | undefined
        const called = /FROM (work_claim\w*)\(/.exec(config?.text ?? "")?.[1] ?? config?.text
        names.push(config?.name === undefined ? "unnamed" : String(called))
        return (original as (...a: Array<unknown>) => unknown).apply(this, args)
      } as typeof pool.query
      return { names, original }
    }),
    ({ names }) => Effect.map(effect, (result) => ({ result, names })),
    ({ original }) => Effect.sync(() => (pool.query = original))
  )

const leasesFor = (slots: number) =>
  Effect.zipWith(SqlClient.SqlClient, PgPool, (sql, pool) => ({
    pool,
    leases: makeLeases(sql.withoutTransforms(), pool, WORKER, Duration.seconds(30), slots)
  }))

const claimAll = (leases: ReturnType<typeof makeLeases>, kinds: ReadonlyArray<string>, n: number) =>
  Effect.forEach(Array.from({ length: n }), () => Effect.map(leases.claim(kinds), Option.getOrThrow), {
    concurrency: "unbounded"
  })

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("work_claim_batch", (it) => {
  it.effect("records each success its owner still holds, fenced one by one, then claims up to max", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { leases } = yield* leasesFor(1)
      const [a, b, c, d, e] = yield* enqueueInOrder("batch.a", ["a1", "a2", "a3", "a4", "a5"])
      const held = yield* claimAll(leases, ["batch.a"], 3)
      expect(held.map((item) => item.id).sort()).toEqual([a, b, c].sort())
      // b was claimed again by this worker (attempt 2 holds it); c was taken over by another owner.
      yield* sql`UPDATE work_items SET attempt_count = 2 WHERE id = ${b}`
      yield* sql`UPDATE work_items SET lease_owner = 'other' WHERE id = ${c}`
      const rows = yield* sql.withoutTransforms()<{ finished: ReadonlyArray<string>; id: string | null }>`
        SELECT * FROM work_claim_batch(
          ${WORKER}, ${["batch.a"]}::text[], 30, 3,
          ${[a, b, c]}::uuid[], ${[1, 1, 1]}::int[], 'SUCCEEDED', 'The attempt succeeded.'
        )
      `
      // Two were due (d, e): both claimed, each row carrying the one recorded success.
      expect(rows.map((row) => row.id).sort()).toEqual([d, e].sort())
      expect(rows.map((row) => row.finished)).toEqual([[a], [a]])
      expect(yield* status(a!)).toMatchObject({ state: "succeeded", leaseOwner: null, lastAttempt: { code: "SUCCEEDED" } })
      expect(yield* status(b!)).toMatchObject({ state: "running", attemptCount: 2, lastAttempt: null })
      expect(yield* status(c!)).toMatchObject({ state: "running", leaseOwner: "other", lastAttempt: null })
      expect(yield* status(d!)).toMatchObject({ state: "running", leaseOwner: WORKER, attemptCount: 1 })
      // Nothing due: one row, the successes and no item. max 0: successes only.
      const none = yield* sql.withoutTransforms()<{ finished: ReadonlyArray<string>; id: string | null }>`
        SELECT finished, id FROM work_claim_batch(
          ${WORKER}, ${["batch.a"]}::text[], 30, 2, ${[d]}::uuid[], ${[1]}::int[], 'SUCCEEDED', 'The attempt succeeded.'
        )
      `
      expect(none).toEqual([{ finished: [d], id: null }])
      const only = yield* sql.withoutTransforms()<{ finished: ReadonlyArray<string>; id: string | null }>`
        SELECT finished, id FROM work_claim_batch(
          ${WORKER}, ${["batch.a"]}::text[], 30, 0, ${[e]}::uuid[], ${[1]}::int[], 'SUCCEEDED', 'The attempt succeeded.'
        )
      `
      expect(only).toEqual([{ finished: [e], id: null }])
    }))

  it.effect("slots' requests in the same turn share one call; each gets its own item and its own success", () =>
    Effect.gen(function* () {
      const { pool, leases } = yield* leasesFor(4)
      const ids = yield* enqueueInOrder("batch.b", ["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"])
      const first = yield* namesSent(pool, claimAll(leases, ["batch.b"], 4))
      expect(first.names).toEqual(["work_claim_batch"])
      expect(first.result.map((item) => item.id).sort()).toEqual(ids.slice(0, 4).sort())
      // b2 was taken over meanwhile: its slot's success is fenced, the others' recorded.
      const sql = yield* SqlClient.SqlClient
      const takenOver = first.result.find((item) => item.id === ids[1])!
      yield* sql`UPDATE work_items SET lease_owner = 'other' WHERE id = ${takenOver.id}`
      const second = yield* namesSent(
        pool,
        Effect.forEach(first.result, (item: ClaimedItem) => leases.succeedAndClaim(item, ["batch.b"]), {
          concurrency: "unbounded"
        })
      )
      expect(second.names).toEqual(["work_claim_batch"])
      expect(second.result.map((answer) => answer.succeeded)).toEqual(
        first.result.map((item) => item.id !== takenOver.id)
      )
      const next = second.result.map((answer) => Option.getOrThrow(answer.next).id)
      expect(next.sort()).toEqual(ids.slice(4).sort())
      for (const item of first.result) {
        expect((yield* status(item.id)).state).toBe(item.id === takenOver.id ? "running" : "succeeded")
      }
    }))

  it.effect("requests for different kinds never share a call, and each gets an item of its own kinds", () =>
    Effect.gen(function* () {
      const { pool, leases } = yield* leasesFor(4)
      const [x] = yield* enqueueInOrder("batch.x", ["x1"])
      const [y] = yield* enqueueInOrder("batch.y", ["y1"])
      const sent = yield* namesSent(
        pool,
        Effect.all([leases.claim(["batch.x"]), leases.claim(["batch.y"]), leases.claim(["batch.y"])], {
          concurrency: "unbounded"
        })
      )
      // One group of one (work_claim) and one group of two (work_claim_batch).
      expect([...sent.names].sort()).toEqual(["work_claim", "work_claim_batch"])
      const [forX, forY, another] = sent.result
      expect(Option.getOrThrow(forX).id).toBe(x)
      expect([forY, another].map((o) => Option.getOrUndefined(o)?.id)).toEqual([y, undefined])
    }))

  it.effect("a call that fails fails every request it carried, with SqlError; the next call works", () =>
    Effect.gen(function* () {
      const { leases } = yield* leasesFor(4)
      const ids = yield* enqueueInOrder("batch.e", ["e1", "e2"])
      const [one, two] = yield* claimAll(leases, ["batch.e"], 2)
      // An id that is not a uuid makes PostgreSQL reject the whole call.
      const broken: ClaimedItem = { ...one!, id: "not-a-uuid" }
      const answers = yield* Effect.all(
        [Effect.either(leases.succeedAndClaim(broken, ["batch.e"])), Effect.either(leases.succeedAndClaim(two!, ["batch.e"]))],
        { concurrency: "unbounded" }
      )
      for (const answer of answers) {
        expect(Either.isLeft(answer)).toBe(true)
        expect(Either.isLeft(answer) ? answer.left : null).toBeInstanceOf(SqlError)
      }
      // Nothing was written: both still running; a retry records both.
      expect((yield* status(ids[1]!)).state).toBe("running")
      const retried = yield* Effect.all(
        [leases.succeedAndClaim(one!, ["batch.e"]), leases.succeedAndClaim(two!, ["batch.e"])],
        { concurrency: "unbounded" }
      )
      expect(retried.map((answer) => answer.succeeded)).toEqual([true, true])
      expect((yield* status(ids[0]!)).state).toBe("succeeded")
    }))

  it.effect("a call once sent runs to its end: an interrupted request's claim is made, only its answer is lost", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { leases } = yield* leasesFor(1)
      const [item] = yield* enqueueInOrder("batch.i", ["i1"])
      // A SHARE lock on the table makes the call's UPDATE wait on the server until it is released.
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* sql
        .withTransaction(
          sql`LOCK TABLE work_items IN SHARE MODE`.pipe(
            Effect.zipRight(Deferred.succeed(locked, undefined)),
            Effect.zipRight(Deferred.await(release))
          )
        )
        .pipe(Effect.fork)
      yield* Deferred.await(locked)
      const request = yield* Effect.fork(leases.claim(["batch.i"]))
      yield* eventually(
        sql<{ readonly n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%work_claim(%'
        `,
        (rows) => rows[0]?.n === 1
      )
      yield* Fiber.interrupt(request)
      expect((yield* status(item!)).state).toBe("queued")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      const after = yield* eventually(status(item!), (s) => s.state === "running")
      expect(after).toMatchObject({ state: "running", leaseOwner: WORKER, attemptCount: 1 })
    }))
})
