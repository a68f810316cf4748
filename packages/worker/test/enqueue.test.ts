import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option, Ref, Stream } from "effect"
import pg from "pg"
import { enqueue, getWorkItem, WORK_CHANNEL } from "../src/index.js"
import { eventually, status, TestDatabase } from "./harness.js"

/**
 * The statements this process's `pg` clients sent while `effect` ran, beside its result: how
 * many, and which went as named prepared statements.
 */
const statementsSent = <A extends object, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const sent: Array<{ readonly named: boolean }> = []
      const original = pg.Client.prototype.query
      pg.Client.prototype.query = function (this: pg.Client, ...args: Array<unknown>) {
        sent.push({ named: (args[0] as { readonly name?: unknown } | undefined)?.name !== undefined })
        return (original as (...a: Array<unknown>) => unknown).apply(this, args)
      } as typeof original
      return { sent, original }
    }),
    ({ sent }) => Effect.map(effect, (result) => ({ ...result, statements: sent.length, named: sent.filter((s) => s.named).length })),
    ({ original }) => Effect.sync(() => (pg.Client.prototype.query = original))
  )

class Rollback {
  readonly _tag = "Rollback"
}

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("enqueue", (it) => {
    it.effect("creates a queued item due now with a 24 hour deadline", () =>
      Effect.gen(function* () {
        const { created, item } = yield* enqueue({ kind: "enq.defaults", key: "k1", payload: { agentId: "a1" } })
        expect(created).toBe(true)
        expect(item).toMatchObject({
          kind: "enq.defaults",
          key: "k1",
          payload: { agentId: "a1" },
          state: "queued",
          attemptCount: 0,
          lastAttempt: null,
          leaseOwner: null,
          leaseExpiresAt: null,
          finishedAt: null
        })
        expect(item.createdAt).toBeInstanceOf(Date)
        expect(item.nextAttemptAt.getTime()).toBe(item.createdAt.getTime())
        expect(item.deadlineAt.getTime() - item.createdAt.getTime()).toBe(24 * 60 * 60 * 1000)
        // The read function returns the same status.
        expect(yield* status(item.id)).toEqual(item)
      }))

    it.effect("honours a delay and an absolute or relative deadline", () =>
      Effect.gen(function* () {
        const delayed = yield* enqueue({ kind: "enq.delay", key: "k1", delay: "10 seconds", deadline: "1 hour" })
        expect(delayed.item.nextAttemptAt.getTime() - delayed.item.createdAt.getTime()).toBe(10_000)
        expect(delayed.item.deadlineAt.getTime() - delayed.item.createdAt.getTime()).toBe(3_600_000)
        const at = new Date(Date.UTC(2031, 0, 2, 3, 4, 5, 678))
        const absolute = yield* enqueue({ kind: "enq.delay", key: "k2", deadline: at })
        expect(absolute.item.deadlineAt).toEqual(at)
      }))

    it.effect("is idempotent per (kind, key) while the item is unfinished", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const first = yield* enqueue({ kind: "enq.idem", key: "agent-1", payload: { n: 1 } })
        const again = yield* enqueue({ kind: "enq.idem", key: "agent-1", payload: { n: 2 } })
        expect(again.created).toBe(false)
        expect(again.item.id).toBe(first.item.id)
        expect(again.item.payload).toEqual({ n: 1 })
        // The same key under another kind is other work.
        const other = yield* enqueue({ kind: "enq.idem.other", key: "agent-1" })
        expect(other.created).toBe(true)
        expect(other.item.id).not.toBe(first.item.id)
        // Once finished, the key can be enqueued again.
        yield* sql`UPDATE work_items SET state = 'succeeded', finished_at = now() WHERE id = ${first.item.id}`
        const next = yield* enqueue({ kind: "enq.idem", key: "agent-1", payload: { n: 3 } })
        expect(next.created).toBe(true)
        expect(next.item.id).not.toBe(first.item.id)
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM work_items WHERE kind = 'enq.idem'`
        expect(rows[0]!.n).toBe(2)
      }))

    it.effect("concurrent enqueues of one key create one item", () =>
      Effect.gen(function* () {
        const results = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => i),
          (i) => enqueue({ kind: "enq.race", key: "same", payload: { i } }),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r.created)).toHaveLength(1)
        expect(new Set(results.map((r) => r.item.id)).size).toBe(1)
      }))

    it.effect("joins the caller's transaction: a rollback leaves no item and no notification", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const pg = yield* PgClient.PgClient
        const received = yield* Ref.make<ReadonlyArray<string>>([])
        const listener = yield* pg.listen(WORK_CHANNEL).pipe(
          Stream.runForEach((kind) => Ref.update(received, (all) => [...all, kind])),
          Effect.fork
        )
        // Wait until the LISTEN is in place: our own probes come back.
        yield* eventually(
          sql`SELECT pg_notify(${WORK_CHANNEL}, 'probe')`.pipe(Effect.zipRight(Ref.get(received))),
          (all) => all.includes("probe")
        )
        yield* Ref.set(received, [])

        const rolledBack = yield* enqueue({ kind: "enq.rolled-back", key: "k1" }).pipe(
          Effect.tap(() => Effect.fail(new Rollback())),
          sql.withTransaction,
          Effect.flip
        )
        expect(rolledBack).toBeInstanceOf(Rollback)
        const count = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM work_items WHERE kind = 'enq.rolled-back'`
        expect(count[0]!.n).toBe(0)

        const committed = yield* sql.withTransaction(
          Effect.gen(function* () {
            // On the transaction's connection, as the caller's other statements: not named.
            const result = yield* statementsSent(enqueue({ kind: "enq.committed", key: "k1" }))
            expect([result.statements, result.named]).toEqual([1, 0])
            // Inside the transaction the item is visible to the transaction itself.
            expect(Option.isSome(yield* getWorkItem(result.item.id))).toBe(true)
            return result
          })
        )
        // Outside a transaction: the item and its notification in one named prepared statement,
        // one commit; again for the same key, the existing item, read by name too.
        const outside = yield* statementsSent(enqueue({ kind: "enq.outside", key: "k1" }))
        expect(outside.created).toBe(true)
        expect([outside.statements, outside.named]).toEqual([1, 1])
        const again = yield* statementsSent(enqueue({ kind: "enq.outside", key: "k1" }))
        expect([again.created, again.item.id, again.statements, again.named]).toEqual([false, outside.item.id, 2, 2])
        yield* sql`SELECT pg_notify(${WORK_CHANNEL}, 'end')`
        const seen = yield* eventually(Ref.get(received), (all) => all.includes("end"))
        expect(seen.filter((kind) => kind !== "probe")).toEqual(["enq.committed", "enq.outside", "end"])
        expect((yield* status(committed.item.id)).state).toBe("queued")
        yield* Fiber.interrupt(listener)
      }))

    it.effect("reads nothing for unknown or malformed ids", () =>
      Effect.gen(function* () {
        expect(yield* getWorkItem("00000000-0000-4000-8000-000000000000")).toEqual(Option.none())
        expect(yield* getWorkItem("not-a-uuid")).toEqual(Option.none())
      }))

    it.effect("rejects kinds and keys outside 1-200 characters as defects", () =>
      Effect.gen(function* () {
        const exit = yield* enqueue({ kind: "", key: "k" }).pipe(Effect.exit)
        expect(exit._tag).toBe("Failure")
        const long = yield* enqueue({ kind: "enq.long", key: "k".repeat(201) }).pipe(Effect.exit)
        expect(long._tag).toBe("Failure")
      }))
  })
