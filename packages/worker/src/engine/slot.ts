import { Duration, Effect, Option } from "effect"
import type { Restore } from "./attempt.js"
import type { WorkHandlersRegistry } from "./handlers.js"
import type { ClaimedItem, Leases } from "./leases.js"
import type { ResolvedOptions } from "./options.js"
import type { Wakeup } from "./wakeup.js"

export interface SlotDeps {
  readonly options: ResolvedOptions
  readonly leases: Leases
  readonly registry: WorkHandlersRegistry
  readonly wakeup: Wakeup
  readonly attempt: (item: ClaimedItem, restore: Restore) => Effect.Effect<Option.Option<ClaimedItem>>
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
 * A worker slot: claims and runs items one at a time until interrupted. The loop is
 * uninterruptible except while idle and while a handler runs, so an interruption (shutdown)
 * never strands a claimed item: a running one has its lease released, and a claim or an outcome
 * being written completes first.
 */
const loop = (deps: SlotDeps): Effect.Effect<never> =>
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
        next = yield* deps.attempt(next.value, restore)
      }
    })
  )

/** Runs a slot; a defect (a bug) is logged and the slot starts over instead of dying. */
export const runSlot = (deps: SlotDeps): Effect.Effect<never> =>
  loop(deps).pipe(
    Effect.catchAllCause((cause) => Effect.logError("work slot failed; restarting it", cause)),
    Effect.zipRight(Effect.sleep(deps.options.pollInterval)),
    Effect.forever
  )
