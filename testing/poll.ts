/** Polling for end-to-end tests that wait on real processes. */
import { Duration, Effect } from "effect"

/** Polls with a real timer (it.live) until `done`, or dies after `seconds`. */
export const until = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean, seconds = 300) =>
  Effect.gen(function* () {
    const deadline = Date.now() + seconds * 1000
    for (;;) {
      const value = yield* read
      if (done(value)) return value
      if (Date.now() > deadline) return yield* Effect.dieMessage(`not reached in ${seconds} s: ${JSON.stringify(value).slice(0, 500)}`)
      yield* Effect.sleep(Duration.millis(250))
    }
  })
