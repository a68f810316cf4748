import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { SvcMetrics } from "@svc/core/observability"
import { Deferred, Duration, Effect, Metric, Ref, Schema } from "effect"
import {
  backoffCeiling,
  enqueue,
  WorkCodes,
  WorkFailure,
  WorkHandler,
  type WorkItem,
  WorkMessages
} from "../src/index.js"
import { captureLogs, startEngine, status, TestDatabase, untilState } from "./harness.js"

const backoff = { base: "100 millis", cap: "400 millis" } as const
const ceilingOf = { base: Duration.decode(backoff.base), cap: Duration.decode(backoff.cap) }
const fast = { concurrency: 2, pollInterval: "200 millis", leaseDuration: "5 seconds", backoff } as const

/** What a handler sees of its own item when an attempt starts. */
interface Seen {
  readonly attempt: number
  readonly scheduledAt: Date
  readonly item: WorkItem
}

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("retries, deadlines and defects", (it) => {
  it.scoped("a failing attempt is retried with exponential backoff and its code recorded", () =>
    Effect.gen(function* () {
      const seen = yield* Ref.make<ReadonlyArray<Seen>>([])
      yield* startEngine(
        { ...fast, workerId: "retry-worker" },
        WorkHandler.layer("retry.flaky", Schema.Unknown, (_, ctx) =>
          Effect.gen(function* () {
            const item = yield* status(ctx.id).pipe(Effect.orDie)
            yield* Ref.update(seen, (all) => [...all, { attempt: ctx.attempt, scheduledAt: ctx.scheduledAt, item }])
            if (ctx.attempt < 4) {
              return yield* new WorkFailure({ code: "UPSTREAM_UNAVAILABLE", message: "The upstream is unavailable." })
            }
          })
        )
      )
      const { item } = yield* enqueue({ kind: "retry.flaky", key: "k1" })
      const done = yield* untilState(item.id, "succeeded", "failed")

      expect(done).toMatchObject({
        state: "succeeded",
        attemptCount: 4,
        leaseOwner: null,
        leaseExpiresAt: null,
        lastAttempt: { code: WorkCodes.SUCCEEDED, message: WorkMessages.SUCCEEDED }
      })
      expect(done.finishedAt).toBeInstanceOf(Date)

      const attempts = yield* Ref.get(seen)
      expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4])
      expect(attempts[0]!.item.lastAttempt).toBeNull()
      for (const [i, a] of attempts.entries()) {
        // While running, the row shows the claim: this worker's lease and the attempt number.
        expect(a.item).toMatchObject({ state: "running", attemptCount: i + 1, leaseOwner: "retry-worker" })
        expect(a.item.nextAttemptAt).toEqual(a.scheduledAt)
        if (i === 0) continue
        const previous = attempts[i - 1]!
        expect(a.item.lastAttempt).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: "The upstream is unavailable." })
        // next_attempt_at grows, and the wait after failure n is within [0, min(cap, base * 2^(n-1))).
        expect(a.scheduledAt.getTime()).toBeGreaterThan(previous.scheduledAt.getTime())
        const waited = a.scheduledAt.getTime() - a.item.lastAttempt!.at.getTime()
        expect(waited).toBeGreaterThanOrEqual(0)
        expect(waited).toBeLessThan(Duration.toMillis(backoffCeiling(ceilingOf, i)))
      }
    }))

  it.scoped("a permanent failure fails the item at once", () =>
    Effect.gen(function* () {
      yield* startEngine(
        { ...fast, workerId: "permanent-worker" },
        WorkHandler.layer("retry.permanent", Schema.Unknown, () =>
          new WorkFailure({ code: "CONFIGURATION_INVALID", message: "The configuration is invalid.", permanent: true })
        )
      )
      const { item } = yield* enqueue({ kind: "retry.permanent", key: "k1" })
      const done = yield* untilState(item.id, "succeeded", "failed")
      expect(done).toMatchObject({
        state: "failed",
        attemptCount: 1,
        leaseOwner: null,
        lastAttempt: { code: "CONFIGURATION_INVALID", message: "The configuration is invalid." }
      })
      expect(done.finishedAt).toBeInstanceOf(Date)
    }))

  it.scoped("retries stop at the deadline with DEADLINE_EXCEEDED", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      yield* startEngine(
        { ...fast, workerId: "deadline-worker" },
        WorkHandler.layer("retry.deadline", Schema.Unknown, () =>
          Ref.update(calls, (n) => n + 1).pipe(
            Effect.zipRight(new WorkFailure({ code: "NOT_READY", message: "Not ready yet." }))
          )
        )
      )
      const { item } = yield* enqueue({ kind: "retry.deadline", key: "k1", deadline: "1500 millis" })
      const done = yield* untilState(item.id, "succeeded", "failed")
      expect(done).toMatchObject({
        state: "failed",
        leaseOwner: null,
        lastAttempt: { code: WorkCodes.DEADLINE_EXCEEDED, message: WorkMessages.DEADLINE_EXCEEDED }
      })
      // It was retried until then (an attempt claimed right at the deadline may be stopped
      // before its handler starts, so calls can trail the count by one).
      expect(done.attemptCount).toBeGreaterThanOrEqual(2)
      const handled = yield* Ref.get(calls)
      expect(handled).toBeGreaterThanOrEqual(2)
      expect(done.attemptCount - handled).toBeLessThanOrEqual(1)
      expect(done.finishedAt).toBeInstanceOf(Date)
    }))

  // The second engine renews once a minute: only the deadline itself (the slot's watcher woken
  // for it) can stop the handler before `untilState` gives up.
  for (const [name, options] of [
    ["", fast],
    [" (renewal due long after the deadline)", { concurrency: 1, pollInterval: "200 millis", leaseDuration: "3 minutes", leaseRenewInterval: "1 minute" }]
  ] as const) {
    it.scoped(`a handler still running at the deadline is interrupted and the item fails${name}`, () =>
      Effect.gen(function* () {
        const interrupted = yield* Deferred.make<void>()
        const kind = `retry.slow${name.length}`
        yield* startEngine(
          { ...options, workerId: "slow-worker" },
          WorkHandler.layer(kind, Schema.Unknown, () =>
            Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
          )
        )
        const { item } = yield* enqueue({ kind, key: "k1", deadline: "1 second" })
        const done = yield* untilState(item.id, "succeeded", "failed")
        yield* Deferred.await(interrupted)
        expect(done).toMatchObject({
          state: "failed",
          attemptCount: 1,
          leaseOwner: null,
          lastAttempt: { code: WorkCodes.DEADLINE_EXCEEDED, message: WorkMessages.DEADLINE_EXCEEDED }
        })
      }))
  }

  it.scoped("an item past its deadline before any attempt fails without running", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const { item } = yield* enqueue({ kind: "retry.late", key: "k1", deadline: new Date(Date.now() - 60_000) })
      yield* startEngine(
        { ...fast, workerId: "late-worker" },
        WorkHandler.layer("retry.late", Schema.Unknown, () => Ref.update(calls, (n) => n + 1))
      )
      const done = yield* untilState(item.id, "succeeded", "failed")
      expect(done).toMatchObject({
        state: "failed",
        attemptCount: 0,
        lastAttempt: { code: WorkCodes.DEADLINE_EXCEEDED, message: WorkMessages.DEADLINE_EXCEEDED }
      })
      expect(yield* Ref.get(calls)).toBe(0)
      // The reaper's transition is counted like an attempt's.
      const failed = Metric.tagged(Metric.tagged(SvcMetrics.workTransitions, "kind", "retry.late"), "to", "failed")
      expect((yield* Metric.value(failed)).count).toBe(1)
    }))

  it.scoped("a defect is recorded as INTERNAL_ERROR with a fixed message; the native text is only logged", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const secret = "password=hunter2 at 10.0.0.7:5432 ECONNREFUSED"
      const logged: Array<string> = []
      const seen = yield* Ref.make<ReadonlyArray<WorkItem>>([])
      yield* startEngine(
        { ...fast, workerId: "defect-worker" },
        WorkHandler.layer("retry.defect", Schema.Unknown, (_, ctx) =>
          Effect.gen(function* () {
            const item = yield* status(ctx.id).pipe(Effect.orDie)
            yield* Ref.update(seen, (all) => [...all, item])
            if (ctx.attempt === 1) return yield* Effect.die(new Error(secret))
            if (ctx.attempt === 2) {
              return yield* Effect.sync(() => {
                throw new TypeError(secret)
              })
            }
          })
        )
      ).pipe(captureLogs(logged))
      const { item } = yield* enqueue({ kind: "retry.defect", key: "k1" })
      const done = yield* untilState(item.id, "succeeded", "failed")
      expect(done).toMatchObject({ state: "succeeded", attemptCount: 3 })

      const attempts = yield* Ref.get(seen)
      expect(attempts.map((a) => a.lastAttempt?.code ?? null)).toEqual([
        null,
        WorkCodes.INTERNAL_ERROR,
        WorkCodes.INTERNAL_ERROR
      ])
      for (const a of attempts.slice(1)) expect(a.lastAttempt!.message).toBe(WorkMessages.INTERNAL_ERROR)
      const row = yield* sql<{ text: string }>`SELECT row_to_json(w)::text AS text FROM work_items w WHERE id = ${item.id}`
      expect(row[0]!.text).not.toContain("hunter2")
      const logs = logged.join("\n")
      expect(logs).toContain("work handler died")
      expect(logs).toContain("hunter2")
    }))

  it.scoped("a payload that does not decode fails permanently with INVALID_PAYLOAD", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      yield* startEngine(
        { ...fast, workerId: "payload-worker" },
        WorkHandler.layer("retry.payload", Schema.Struct({ agentId: Schema.String }), () =>
          Ref.update(calls, (n) => n + 1)
        )
      )
      const { item } = yield* enqueue({ kind: "retry.payload", key: "k1", payload: { agentId: 42 } })
      const done = yield* untilState(item.id, "succeeded", "failed")
      expect(done).toMatchObject({
        state: "failed",
        attemptCount: 1,
        lastAttempt: { code: WorkCodes.INVALID_PAYLOAD, message: WorkMessages.INVALID_PAYLOAD }
      })
      expect(yield* Ref.get(calls)).toBe(0)
    }))

  it.scoped("codes and messages are cut to 64 and 256 characters", () =>
    Effect.gen(function* () {
      yield* startEngine(
        { ...fast, workerId: "long-worker" },
        WorkHandler.layer("retry.long", Schema.Unknown, () =>
          new WorkFailure({ code: "C".repeat(100), message: "m".repeat(1000), permanent: true })
        )
      )
      const { item } = yield* enqueue({ kind: "retry.long", key: "k1" })
      const done = yield* untilState(item.id, "failed")
      expect(done.lastAttempt).toMatchObject({ code: "C".repeat(64), message: "m".repeat(256) })
    }))
})
