import { Duration, Effect } from "effect"

/**
 * Wakes idle worker slots. Each signal is a token taken by one waiting slot; tokens left while
 * every slot is busy are kept (up to one per slot), so a signal sent while a slot is between its
 * empty claim and its wait is not lost.
 */
export interface Wakeup {
  /** Adds `count` tokens (at most one per slot are kept). */
  readonly signal: (count: number) => Effect.Effect<void>
  /** `signal`, from a callback outside any fiber (a notification arriving on its connection). */
  readonly unsafeSignal: (count: number) => void
  /** Waits for a token or the timeout, whichever comes first. */
  readonly wait: (timeout: Duration.Duration) => Effect.Effect<void>
  /** How many slots are waiting right now. */
  readonly idle: Effect.Effect<number>
}

/**
 * A waiting slot is a callback that resumes its fiber, and its timeout a timer it cancels: a
 * signal resumes the slot at once. Built from a queue taken under `Effect.timeoutOption`, every
 * wait forked and raced a sleeping fiber, which put 0.3 ms at the median (and up to 0.9 ms) between
 * an item's notification and its claim being sent (docs/decisions/performance.md, session 23).
 */
const MAX_TIMER_MILLIS = 2 ** 31 - 1

export const makeWakeup = (slots: number): Effect.Effect<Wakeup> =>
  Effect.sync(() => {
    // Oldest first: a Set iterates in insertion order.
    const waiting = new Set<() => void>()
    let tokens = 0

    const unsafeSignal = (count: number): void => {
      let left = Math.min(count, slots)
      for (const wake of waiting) {
        if (left === 0) break
        left--
        wake()
      }
      tokens = Math.min(slots, tokens + left)
    }

    const wait = (timeout: Duration.Duration): Effect.Effect<void> =>
      Effect.async<void>((resume) => {
        if (tokens > 0) {
          tokens--
          resume(Effect.void)
          return
        }
        const wake = () => {
          waiting.delete(wake)
          clearTimeout(timer)
          resume(Effect.void)
        }
        const millis = Duration.toMillis(timeout)
        // Past what a timer can hold (an infinite poll interval), only a signal wakes the slot.
        const timer = millis <= MAX_TIMER_MILLIS ? setTimeout(wake, millis) : undefined
        waiting.add(wake)
        // Interrupted (shutdown): the slot stops waiting and takes no token.
        return Effect.sync(() => {
          waiting.delete(wake)
          clearTimeout(timer)
        })
      })

    return {
      signal: (count) => Effect.sync(() => unsafeSignal(count)),
      unsafeSignal,
      wait,
      idle: Effect.sync(() => waiting.size)
    }
  })
