import { type Duration, Effect, Queue, Ref } from "effect"

/**
 * Wakes idle worker slots. Each signal is a token taken by one waiting slot; tokens left while
 * every slot is busy are kept (up to one per slot), so a signal sent while a slot is between its
 * empty claim and its wait is not lost.
 */
export interface Wakeup {
  /** Adds `count` tokens (at most one per slot are kept). */
  readonly signal: (count: number) => Effect.Effect<void>
  /** Waits for a token or the timeout, whichever comes first. */
  readonly wait: (timeout: Duration.Duration) => Effect.Effect<void>
  /** How many slots are waiting right now. */
  readonly idle: Effect.Effect<number>
}

export const makeWakeup = (slots: number): Effect.Effect<Wakeup> =>
  Effect.gen(function* () {
    const tokens = yield* Queue.sliding<void>(slots)
    const waiting = yield* Ref.make(0)
    return {
      signal: (count) =>
        count <= 0 ? Effect.void : tokens.offerAll(Array.from({ length: Math.min(count, slots) }, () => undefined)),
      wait: (timeout) =>
        Effect.acquireUseRelease(
          Ref.update(waiting, (n) => n + 1),
          () => Queue.take(tokens).pipe(Effect.timeoutOption(timeout)),
          () => Ref.update(waiting, (n) => n - 1)
        ).pipe(Effect.asVoid),
      idle: Ref.get(waiting)
    }
  })
