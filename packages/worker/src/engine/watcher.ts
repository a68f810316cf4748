import { type Clock, Duration, Effect, type Fiber, type FiberId, Queue } from "effect"
import type { ClaimedItem, Leases } from "./leases.js"

/** Why the watcher stopped an attempt. */
export type Stopped = "LeaseLost" | "DeadlineReached"

/** The attempt a slot is running, as its watcher sees it. Times are on the local clock. */
export interface Watched {
  readonly item: ClaimedItem
  /** The slot's runner fiber, interrupted to stop the attempt. */
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  readonly stopAt: number
  renewAt: number
  /**
   * Until when the lease is certainly ours: one lease from when the last successful renewal was
   * sent (the database's expiry is later), or before the first, from the claim less a margin.
   * Past it, with no renewal confirmed, another worker may own the item.
   */
  heldUntil: number
  stopped: Stopped | null
}

/**
 * One long-lived watcher per slot, instead of a guard raced against every attempt: the attempt
 * forks nothing, it only marks itself current (`begin`) while its handler runs and unmarks itself
 * (`end`) as the last step before its handler's result is used. The watcher renews the current
 * attempt's lease every `leaseRenewInterval`, and interrupts the runner fiber when the lease is
 * found lost (fencing: another worker may own the item now) or the deadline is reached; it records
 * why in `stopped`, which the attempt reads when interrupted. A failed renewal (database
 * unreachable) is tried again at the next interval, until the lease can no longer be held
 * (`heldUntil`): then the attempt is stopped as `LeaseLost` without the database, because once
 * the lease has expired there the reaper gives the item to another worker.
 */
export interface Watch {
  /** Marks the runner's attempt current; its first renewal is one interval from now. */
  readonly begin: (item: ClaimedItem, fiber: Fiber.RuntimeFiber<unknown, unknown>) => Watched
  /** Unmarks it; after this the watcher no longer touches the attempt. */
  readonly end: (watched: Watched) => void
  /**
   * After the runner fiber ended: the attempt it left unfinished (begun, not ended: interrupted
   * by the watcher or by shutdown), now forgotten; null if none.
   */
  readonly settle: () => Watched | null
  /** The watcher's loop; run it forked beside the slot's runner. */
  readonly run: Effect.Effect<never>
}

export const makeWatch = (
  leases: Leases,
  leaseDuration: Duration.Duration,
  leaseRenewInterval: Duration.Duration,
  clock: Clock.Clock
): Effect.Effect<Watch> =>
  Effect.map(Queue.sliding<void>(1), (pokes) => {
    const leaseMs = Duration.toMillis(leaseDuration)
    const renewEvery = Duration.toMillis(leaseRenewInterval)
    // At most a second, and short of the first renewal (options keep the interval below the lease).
    const claimMargin = Math.min(1000, (leaseMs - renewEvery) / 2)
    let current: Watched | null = null
    // The attempt between `begin` and `end`; unlike `current`, kept when the watcher stops it.
    let running: Watched | null = null
    // When the sleeping watcher wakes up next (0 while it is awake: it reads `current` before sleeping).
    let sleepingUntil = 0

    const begin = (item: ClaimedItem, fiber: Fiber.RuntimeFiber<unknown, unknown>): Watched => {
      const now = clock.unsafeCurrentTimeMillis()
      // Both instants are database time; the remaining span is measured on the local clock.
      const stopAt = now + (item.deadlineAt.getTime() - item.claimedAt.getTime())
      // The claim's lease began in the database a round trip before now: a margin is taken off.
      const heldUntil = now + leaseMs - claimMargin
      const watched: Watched = { item, fiber, stopAt, renewAt: now + renewEvery, heldUntil, stopped: null }
      current = watched
      running = watched
      // Renewal is never due before the sleeping watcher wakes (it sleeps at most one interval);
      // a deadline may be.
      if (stopAt < sleepingUntil) pokes.unsafeOffer(undefined)
      return watched
    }

    const end = (watched: Watched): void => {
      if (current === watched) current = null
      if (running === watched) running = null
    }

    const settle = (): Watched | null => {
      const left = running
      running = null
      if (left !== null && current === left) current = null
      return left
    }

    // One synchronous step: the check and the interruption cannot be split by the runner moving on.
    const stop = (watched: Watched, why: Stopped, by: FiberId.FiberId) =>
      Effect.sync(() => {
        if (current !== watched || watched.stopped !== null) return
        watched.stopped = why
        current = null
        watched.fiber.unsafeInterruptAsFork(by)
      })

    const run = Effect.gen(function* () {
      const self = yield* Effect.fiberId
      for (;;) {
        const now = clock.unsafeCurrentTimeMillis()
        const watched = current
        if (watched !== null && now >= watched.stopAt) {
          yield* stop(watched, "DeadlineReached", self)
          continue
        }
        if (watched !== null && now >= watched.heldUntil) {
          yield* Effect.logWarning("work lease could not be renewed before it expired; stopping the attempt").pipe(
            Effect.annotateLogs({ workId: watched.item.id, workKind: watched.item.kind, workAttempt: watched.item.attempt })
          )
          yield* stop(watched, "LeaseLost", self)
          continue
        }
        if (watched !== null && now >= watched.renewAt) {
          watched.renewAt = now + renewEvery
          // A renewal that hangs (a database gone without closing the connection) is left behind
          // when the lease can no longer be held, so the check above still runs in time.
          const renewal = yield* leases.renew(watched.item).pipe(
            Effect.map((held) => (held ? "held" : "lost")),
            Effect.disconnect,
            Effect.timeoutTo({
              duration: Duration.millis(Math.max(0, watched.heldUntil - now)),
              onSuccess: (answer) => answer,
              onTimeout: () => "unconfirmed" as const
            }),
            Effect.catchAll((error) => Effect.as(Effect.logWarning("work lease renewal failed", error), "unconfirmed" as const))
          )
          if (renewal === "lost") yield* stop(watched, "LeaseLost", self)
          if (renewal === "held") watched.heldUntil = Math.max(watched.heldUntil, now + leaseMs)
          continue
        }
        const wakeAt =
          watched === null ? now + renewEvery : Math.min(watched.renewAt, watched.stopAt, watched.heldUntil)
        sleepingUntil = wakeAt
        yield* Queue.take(pokes).pipe(Effect.timeoutOption(Duration.millis(Math.max(0, wakeAt - now))))
        sleepingUntil = 0
      }
    })

    return { begin, end, settle, run }
  })
