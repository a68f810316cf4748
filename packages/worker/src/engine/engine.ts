import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schedule } from "effect"
import { makeAttempt, makeSettle } from "./attempt.js"
import { listenReconnectingWith, PgPool } from "@svc/core/db"
import { spansExported } from "@svc/core/observability"
import { WORK_CHANNEL } from "@svc/core/work"
import { WorkHandlers } from "./handlers.js"
import { makeLeases } from "./leases.js"
import { resolveOptions, type ResolvedOptions, type WorkEngineOptions } from "./options.js"
import { makeOutcomes } from "./outcomes.js"
import { runSlot } from "./slot.js"
import { makeWakeup } from "./wakeup.js"
import { sampleQueue } from "./queueGauges.js"

export interface WorkEngineService {
  /** The `lease_owner` this process writes. */
  readonly workerId: string
  readonly options: ResolvedOptions
}

const make = (input: WorkEngineOptions | undefined) =>
  Effect.gen(function* () {
    const options = yield* Effect.sync(() => resolveOptions(input))
    const annotate = Effect.annotateLogs({ workerId: options.workerId })
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const registry = yield* WorkHandlers
    const leases = makeLeases(sql, yield* PgPool, options.workerId, options.leaseDuration, options.concurrency)
    const outcomes = makeOutcomes(sql, options.workerId, leases)
    const wakeup = yield* makeWakeup(options.concurrency)
    // Effect's native tracer (the default) keeps spans in memory only: no attempt span then.
    const tracing = yield* spansExported
    const attemptDeps = { options, leases, outcomes, registry, tracing }
    const attempt = makeAttempt(attemptDeps)
    const settle = makeSettle(attemptDeps)
    const clock = yield* Effect.clock

    // Wake an idle slot as soon as an item of a kind we run is committed, from the notification's
    // own callback (no queue or fiber between them: that path is an item's claim latency). While
    // the connection is lost the slots poll; once it is back every slot looks, for what was
    // enqueued meanwhile.
    yield* listenReconnectingWith(WORK_CHANNEL, "svc-work-listen", (event) => {
      if (event._tag === "Listening") wakeup.unsafeSignal(options.concurrency)
      else if (registry.unsafeKinds().includes(event.payload)) wakeup.unsafeSignal(1)
    }).pipe(Effect.annotateLogs({ fiber: "work.listen" }), annotate)

    // Any worker returns expired leases and fails items past their deadline.
    yield* Effect.all([leases.reapExpired, leases.failPastDeadline]).pipe(
      Effect.tap(([requeued, failed]) =>
        requeued + failed === 0
          ? Effect.void
          : Effect.logInfo("work reaper", { requeuedExpiredLeases: requeued, failedPastDeadline: failed })
      ),
      Effect.flatMap(([requeued]) => wakeup.signal(requeued)),
      Effect.catchAllCause((cause) => Effect.logWarning("work reaper failed", cause)),
      Effect.repeat(Schedule.spaced(options.reapInterval)),
      Effect.annotateLogs({ fiber: "work.reaper" }),
      annotate,
      Effect.interruptible,
      Effect.forkScoped
    )

    // Queue depth and age for the metrics endpoints (svc_work_items, svc_work_queue_oldest_age_seconds).
    yield* sampleQueue(sql, registry.kinds).pipe(annotate)

    // The slots run under one fiber: closing the scope interrupts them all at once, so none claims
    // while the others are releasing.
    yield* Effect.all(
      Array.from({ length: options.concurrency }, (_, slot) =>
        runSlot({ options, leases, registry, wakeup, clock, attempt, settle }).pipe(Effect.annotateLogs({ workSlot: slot }))
      ),
      { concurrency: "unbounded", discard: true }
    ).pipe(annotate, Effect.interruptible, Effect.forkScoped)

    yield* Effect.logInfo("work engine started", {
      concurrency: options.concurrency,
      kinds: yield* registry.kinds
    }).pipe(annotate)
    yield* Effect.addFinalizer(() => Effect.logInfo("work engine stopping").pipe(annotate))
    return WorkEngine.of({ workerId: options.workerId, options })
  })

/**
 * The worker loop of this process: `concurrency` slots that claim due items of the registered
 * kinds (`FOR UPDATE SKIP LOCKED`), run their handlers under a renewed lease, and record every
 * attempt; a reaper that returns expired leases; `LISTEN svc_work` plus polling to wake up.
 * Closing the layer's scope stops claiming, interrupts running handlers and releases their leases.
 */
export class WorkEngine extends Context.Tag("@svc/worker/WorkEngine")<WorkEngine, WorkEngineService>() {
  static readonly layer = (
    options?: WorkEngineOptions
  ): Layer.Layer<WorkEngine, never, SqlClient.SqlClient | PgClient.PgClient | PgPool | WorkHandlers> =>
    Layer.scoped(WorkEngine, make(options))
}
