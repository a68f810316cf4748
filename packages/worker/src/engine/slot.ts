import { Cause, type Clock, Duration, Effect, Exit, Fiber, Option } from "effect"
import type { Restore } from "./attempt.js"
import { withAttemptLogs } from "./attemptLogs.js"
import type { WorkHandlersRegistry } from "./handlers.js"
import type { ClaimedItem, Leases } from "./leases.js"
import type { ResolvedOptions } from "./options.js"
import type { Wakeup } from "./wakeup.js"
import { makeWatch, type Watch, type Watched } from "./watcher.js"

export interface SlotDeps {
  readonly options: ResolvedOptions
  readonly leases: Leases
  readonly registry: WorkHandlersRegistry
  readonly wakeup: Wakeup
  readonly clock: Clock.Clock
  readonly attempt: (item: ClaimedItem, restore: Restore, watch: Watch) => Effect.Effect<Option.Option<ClaimedItem>>
  /** Records or releases an attempt its runner left unfinished when interrupted. */
  readonly settle: (watched: Watched) => Effect.Effect<void>
}

/** The shortest idle wait, for items that are due but being claimed by someone else right now. */
const MIN_WAIT = Duration.millis(25)

/** Claims one due item; a database error is logged and treated as "nothing to do". */
const claim = (deps: SlotDeps): Effect.Effect<Option.Option<ClaimedItem>> =>
  Effect.flatMap(deps.registry.kinds, (kinds) =>
    kinds.length === 0
      ? Effect.succeedNone
      : deps.leases.claim(kinds).pipe(
          Effect.catchAll((error) => Effect.as(Effect.logWarning("work claim failed", error), Option.none()))
        )
  )

/** Waits for a notification, the next due item (as far as this worker can tell), or the poll interval. */
const idle = (deps: SlotDeps): Effect.Effect<void> =>
  Effect.gen(function* () {
    const kinds = yield* deps.registry.kinds
    const dueIn =
      kinds.length === 0 ? null : yield* deps.leases.nextDueIn(kinds).pipe(Effect.orElseSucceed(() => null))
    const timeout =
      dueIn === null
        ? deps.options.pollInterval
        : Duration.clamp(Duration.millis(Math.ceil(dueIn)), { minimum: MIN_WAIT, maximum: deps.options.pollInterval })
    yield* deps.wakeup.wait(timeout)
  })

/**
 * A slot's runner: claims and runs items one at a time until interrupted. The loop is
 * uninterruptible except while idle and while a handler runs, so an interruption (shutdown, or
 * the watcher stopping an attempt) never strands a claimed item: a running one has its lease
 * released or its outcome recorded, and a claim or an outcome being written completes first.
 */
const loop = (deps: SlotDeps, watch: Watch): Effect.Effect<never> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      let next = Option.none<ClaimedItem>()
      for (;;) {
        if (Option.isNone(next)) {
          next = yield* claim(deps)
          if (Option.isNone(next)) {
            yield* restore(idle(deps))
            continue
          }
        }
        // More may be due: let one idle slot look too.
        if ((yield* deps.wakeup.idle) > 0) yield* deps.wakeup.signal(1)
        next = yield* deps.attempt(next.value, restore, watch)
      }
    })
  )

/**
 * Runs a slot: its runner, and beside it the watcher that renews the running attempt's lease and
 * stops the attempt (by interrupting the runner) when the lease is lost or the deadline reached.
 * A stopped runner is replaced at once; a defect (a bug) is logged and the runner starts over
 * after a pause instead of the slot dying. Interrupting the slot interrupts the runner and waits
 * for it (its lease released).
 */
export const runSlot = (deps: SlotDeps): Effect.Effect<never> =>
  Effect.gen(function* () {
    const watch = yield* makeWatch(deps.leases, deps.options.leaseDuration, deps.options.leaseRenewInterval, deps.clock)
    const watcher = yield* Effect.fork(Effect.interruptible(watch.run))
    // The attempt an ended runner left unfinished: settled when the runner was interrupted (by the
    // watcher or by shutdown); after a defect it is forgotten and its lease expires.
    const settle = (interrupted: boolean) =>
      Effect.suspend(() => {
        const left = watch.settle()
        return left === null || !interrupted ? Effect.void : deps.settle(left)
      })
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.fork(Effect.interruptible(withAttemptLogs(loop(deps, watch)))), (runner) =>
        restore(Fiber.await(runner)).pipe(
          Effect.onInterrupt(() => Effect.zipRight(Fiber.interrupt(runner), settle(true))),
          Effect.tap((exit) => settle(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)))
        )
      )
    ).pipe(
      Effect.flatMap((exit) =>
        // Interrupted by the watcher: the attempt's outcome is recorded; run on.
        Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)
          ? Effect.void
          : Effect.zipRight(
              Effect.logError("work slot failed; restarting it", exit.cause),
              Effect.sleep(deps.options.pollInterval)
            )
      ),
      Effect.forever,
      Effect.ensuring(Fiber.interrupt(watcher))
    )
  })
