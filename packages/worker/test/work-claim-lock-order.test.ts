import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber } from "effect"
import { enqueueInOrder, eventually, status, TestDatabase } from "./harness.js"

/**
 * The claim functions write a success and the next claim in one UPDATE (migration 0024), and
 * still take their row locks in the order the two statements of migrations 0019 and 0020 took
 * them: the successes' rows first, then the queued items to claim. A writer that holds a
 * success's row and then wants a queued item (a cancellation covering both) therefore waits for
 * the claim, never deadlocks with it: while a claim waits for its success's row it holds no
 * queued item.
 */
const WORKER = "lock-order-worker"

const CALLS = {
  work_claim: (success: { readonly id: string; readonly attempt: number }) =>
    `SELECT * FROM work_claim('${WORKER}', '{lock.order}', 30, 1, '${success.id}', ${success.attempt}, 'SUCCEEDED', 'ok')`,
  work_claim_batch: (success: { readonly id: string; readonly attempt: number }) =>
    `SELECT * FROM work_claim_batch('${WORKER}', '{lock.order}', 30, 2, '{${success.id}}', '{${success.attempt}}', 'SUCCEEDED', 'ok')`
} as const

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("the claim functions' lock order", (it) => {
  for (const fn of ["work_claim", "work_claim_batch"] as const) {
    it.effect(`${fn}: waiting for a success's row, it holds no queued item; then records the success and claims`, () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const raw = sql.withoutTransforms()
        yield* sql`DELETE FROM work_items WHERE kind = 'lock.order'`
        const [running, next] = yield* enqueueInOrder("lock.order", ["running", "next"])
        yield* sql`
          UPDATE work_items SET state = 'running', lease_owner = ${WORKER},
            lease_expires_at = now() + interval '30 seconds', attempt_count = 1
          WHERE id = ${running}
        `
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* sql
          .withTransaction(
            sql`SELECT id FROM work_items WHERE id = ${running} FOR UPDATE`.pipe(
              Effect.zipRight(Deferred.succeed(locked, undefined)),
              Effect.zipRight(Deferred.await(release))
            )
          )
          .pipe(Effect.fork)
        yield* Deferred.await(locked)
        const call = yield* raw
          .unsafe<{ readonly finished: boolean | ReadonlyArray<string> | null; readonly id: string | null }>(
            CALLS[fn]({ id: running!, attempt: 1 })
          )
          .pipe(Effect.fork)
        yield* eventually(
          sql<{ readonly n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE ${`%${fn}('${WORKER}'%`}
          `,
          (rows) => rows[0]?.n === 1
        )
        // The queued item is free while the call waits: another transaction takes it at once.
        const taken = yield* sql
          .withTransaction(sql`SELECT id FROM work_items WHERE id = ${next} FOR UPDATE NOWAIT`)
          .pipe(Effect.either)
        expect(Either.isRight(taken), JSON.stringify(Either.isLeft(taken) ? taken.left.cause : null)).toBe(true)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const rows = yield* Fiber.join(call)
        expect(rows.map((row) => row.id)).toEqual([next])
        expect(rows[0]!.finished).toEqual(fn === "work_claim" ? true : [running])
        expect(yield* status(running!)).toMatchObject({ state: "succeeded", leaseOwner: null, attemptCount: 1 })
        expect(yield* status(next!)).toMatchObject({ state: "running", leaseOwner: WORKER, attemptCount: 1 })
      }))
  }
})
