import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { SvcMetrics } from "@svc/core/observability"
import { Deferred, Effect, FiberRef, HashMap, HashSet, Logger, Metric, Ref, Schema } from "effect"
import { enqueue, WorkCodes, WorkHandler } from "../src/index.js"
import { captureLogs, countByState, eventually, itemsOfKind, startEngine, status, TestDatabase, untilState } from "./harness.js"

/**
 * The per-slot watcher (src/engine/watcher.ts): one fiber per slot renews the running attempt's
 * lease and interrupts the slot's runner when the lease is lost or the deadline reached; the
 * slot then starts a new runner. These pin what the watcher must keep doing across attempts
 * (a deadline due before the next renewal: retries.test.ts).
 */
layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("the slot's lease watcher", (it) => {
  it.scoped("after stopping an attempt whose lease was lost, the slot runs on and the next attempt's lease is renewed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const started = yield* Deferred.make<string>()
      const interrupted = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      yield* startEngine(
        {
          concurrency: 1,
          pollInterval: "200 millis",
          leaseDuration: "1 second",
          leaseRenewInterval: "200 millis",
          reapInterval: "60 seconds",
          workerId: "watched"
        },
        WorkHandler.layer("watch.relay", Schema.Struct({ step: Schema.String }), ({ step }) =>
          step === "first"
            ? Deferred.succeed(started, step).pipe(
                Effect.zipRight(Effect.never),
                Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
              )
            : Deferred.await(finish)
        )
      )
      const first = yield* enqueue({ kind: "watch.relay", key: "first", payload: { step: "first" } })
      expect(yield* Deferred.await(started)).toBe("first")
      yield* sql`UPDATE work_items SET lease_owner = 'taker', attempt_count = attempt_count + 1 WHERE id = ${first.item.id}`
      yield* Deferred.await(interrupted)

      // The slot took up work again; the second handler outlives several leases (the reaper is
      // too slow to matter): only the watcher's renewals keep its lease.
      const second = yield* enqueue({ kind: "watch.relay", key: "second", payload: { step: "second" } })
      const running = yield* untilState(second.item.id, "running")
      const renewed = yield* eventually(
        status(second.item.id),
        (now) => now.leaseExpiresAt !== null && now.leaseExpiresAt.getTime() > running.leaseExpiresAt!.getTime() + 2000
      )
      expect(renewed).toMatchObject({ state: "running", attemptCount: 1, leaseOwner: "watched" })
      yield* Deferred.succeed(finish, undefined)
      expect(yield* untilState(second.item.id, "succeeded", "failed")).toMatchObject({
        state: "succeeded",
        attemptCount: 1,
        leaseOwner: null,
        lastAttempt: { code: WorkCodes.SUCCEEDED }
      })
      expect(yield* status(first.item.id)).toMatchObject({ state: "running", leaseOwner: "taker", attemptCount: 2 })
      yield* sql`UPDATE work_items SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = ${first.item.id}`
    }))

  it.scoped("renewals racing attempts that end never stop a later attempt", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const logged: Array<string> = []
      // Renewals every 20 ms against handlers of 0-60 ms: many renewals land as an attempt ends
      // (its row already succeeded, so the renewal finds no lease) while the next one runs. The
      // lease is long enough that a loaded machine stalling the process or the database for a
      // couple of seconds (seen once in CI with a 2 s lease) cannot expire one between its claim
      // and its outcome; what is tested is the renewals' race, not the lease's length.
      yield* startEngine(
        { concurrency: 2, pollInterval: "200 millis", leaseDuration: "15 seconds", leaseRenewInterval: "20 millis", workerId: "busy" },
        WorkHandler.layer("watch.busy", Schema.Struct({ ms: Schema.Number }), ({ ms }) =>
          Effect.zipRight(Ref.update(calls, (n) => n + 1), Effect.sleep(`${ms} millis`))
        )
      ).pipe(captureLogs(logged))
      for (let i = 0; i < 40; i++) yield* enqueue({ kind: "watch.busy", key: `k${i}`, payload: { ms: (i * 7) % 61 } })
      yield* eventually(countByState("watch.busy"), (counts) => counts.succeeded === 40)
      const items = yield* itemsOfKind("watch.busy")
      expect(items.map((item) => [item.state, item.attemptCount])).toEqual(items.map(() => ["succeeded", 1]))
      expect(yield* Ref.get(calls)).toBe(40)
      expect(logged.filter((line) => line.includes("lease lost"))).toEqual([])
      // Exactly one claim per item: no attempt was stopped and its item released and claimed again.
      const claims = Metric.tagged(Metric.tagged(SvcMetrics.workTransitions, "kind", "watch.busy"), "to", "running")
      expect((yield* Metric.value(claims)).count).toBe(40)
    }))

  it.scoped("a handler's log lines carry its item's id, kind and attempt", () =>
    Effect.gen(function* () {
      const lines: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
      const recorder = Logger.make(({ annotations, message }) => {
        lines.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
      })
      yield* startEngine(
        { concurrency: 1, pollInterval: "200 millis", workerId: "logged" },
        WorkHandler.layer("watch.logged", Schema.Unknown, () => Effect.logWarning("handler says hello"))
      ).pipe(Effect.locallyWith(FiberRef.currentLoggers, HashSet.add(recorder)))
      const { item } = yield* enqueue({ kind: "watch.logged", key: "k1" })
      yield* untilState(item.id, "succeeded")
      const said = lines.filter((line) => JSON.stringify(line.message).includes("handler says hello"))
      expect(said.map((line) => line.annotations)).toEqual([
        { workerId: "logged", workSlot: 0, workId: item.id, workKind: "watch.logged", workAttempt: 1 }
      ])
    }))
})

