import { Duration, Effect, Exit, Option } from "effect"
import type { WorkHandlersRegistry } from "./handlers.js"
import type { ClaimedItem, Leases } from "./leases.js"
import type { ResolvedOptions } from "./options.js"
import type { Wakeup } from "./wakeup.js"

export interface SlotDeps {
  readonly options: ResolvedOptions
  readonly leases: Leases
  readonly registry: WorkHandlersRegistry
  readonly wakeup: Wakeup
  readonly runAttempt: (item: ClaimedItem) => Effect.Effect<void>
}

/** The shortest idle wait, for items that are due but being claimed by someone else right now. */
const MIN_WAIT = Duration.millis(25)

/**
 * One claim-run-record cycle. The claim is uninterruptible (acquire), so an interruption never
 * leaves a claimed item behind: when the attempt does not finish (shutdown), the lease is
 * released, putting the item back to `queued` without counting a failure.
 */
const cycle = (deps: SlotDeps): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const kinds = yield* deps.registry.kinds
    if (kinds.length === 0) return false
    return yield* Effect.acquireUseRelease(
      deps.leases.claim(kinds),
      Option.match({
        onNone: () => Effect.succeed(false),
        onSome: (item) =>
          // More may be due: let one idle slot look too.
          Effect.flatMap(deps.wakeup.idle, (idle) => (idle > 0 ? deps.wakeup.signal(1) : Effect.void)).pipe(
            Effect.zipRight(deps.runAttempt(item)),
            Effect.as(true)
          )
      }),
      (claimed, exit) =>
        Option.isSome(claimed) && Exit.isFailure(exit)
          ? deps.leases.release(claimed.value).pipe(
              Effect.tap((released) => (released ? Effect.logInfo("work lease released") : Effect.void)),
              Effect.annotateLogs({ workId: claimed.value.id, workKind: claimed.value.kind }),
              Effect.catchAll((error) =>
                Effect.logWarning("work lease release failed; it will expire instead", error)
              )
            )
          : Effect.void
    )
  }).pipe(
    // A database error (or a bug) must not end the slot: log it and wait as if idle. (An
    // interruption from outside is not caught: the slot stops.)
    Effect.catchAllCause((cause) => Effect.logWarning("work claim failed", cause).pipe(Effect.as(false)))
  )

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

/** A worker slot: claims and runs items one at a time until interrupted. */
export const runSlot = (deps: SlotDeps): Effect.Effect<never> =>
  cycle(deps).pipe(
    Effect.flatMap((worked) => (worked ? Effect.void : idle(deps))),
    Effect.forever
  )
