import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { makeWakeup } from "../src/engine/wakeup.js"

/**
 * How idle slots are woken (src/engine/wakeup.ts). The slots' behaviour with a real database
 * (a notification waking an idle worker, a lost LISTEN connection) is in leases.test.ts; here,
 * the token rules on their own, on the real clock.
 */
const LONG = Duration.minutes(10)

/** Lets forked fibers run until they block. */
const settle = Effect.sleep(Duration.millis(20))

describe("wakeup", () => {
  it.live("a signal sent while no slot waits is kept for the next wait", () =>
    Effect.gen(function* () {
      const wakeup = yield* makeWakeup(2)
      yield* wakeup.signal(1)
      // Without the kept token this waits ten minutes and the test times out.
      yield* wakeup.wait(LONG)
      expect(yield* wakeup.idle).toBe(0)
    }))

  it.live("keeps at most one token per slot", () =>
    Effect.gen(function* () {
      const wakeup = yield* makeWakeup(2)
      yield* wakeup.signal(5)
      yield* wakeup.wait(LONG)
      yield* wakeup.wait(LONG)
      const third = yield* Effect.fork(wakeup.wait(LONG))
      yield* settle
      expect(third.unsafePoll()).toBeNull()
      expect(yield* wakeup.idle).toBe(1)
      yield* Fiber.interrupt(third)
      expect(yield* wakeup.idle).toBe(0)
    }))

  it.live("a signal wakes the slots that wait, oldest first, one per token", () =>
    Effect.gen(function* () {
      const wakeup = yield* makeWakeup(3)
      const first = yield* Effect.fork(wakeup.wait(LONG))
      yield* settle
      const second = yield* Effect.fork(wakeup.wait(LONG))
      yield* settle
      expect(yield* wakeup.idle).toBe(2)
      yield* wakeup.signal(1)
      yield* Fiber.join(first)
      expect(second.unsafePoll()).toBeNull()
      expect(yield* wakeup.idle).toBe(1)
      // From a callback outside any fiber, as a notification arrives.
      wakeup.unsafeSignal(1)
      yield* Fiber.join(second)
      expect(yield* wakeup.idle).toBe(0)
    }))

  it.live("a signal counts at most one token per slot, woken slots included", () =>
    Effect.gen(function* () {
      const wakeup = yield* makeWakeup(2)
      const waiting = yield* Effect.fork(wakeup.wait(LONG))
      yield* settle
      // Four asked, two counted: one wakes the waiting slot and one is kept.
      yield* wakeup.signal(4)
      yield* Fiber.join(waiting)
      yield* wakeup.wait(LONG)
      const after = yield* Effect.fork(wakeup.wait(LONG))
      yield* settle
      expect(after.unsafePoll()).toBeNull()
      yield* Fiber.interrupt(after)
    }))

  it.live("a wait ends at its timeout when nothing signals", () =>
    Effect.gen(function* () {
      const wakeup = yield* makeWakeup(1)
      const fiber = yield* Effect.fork(wakeup.wait(Duration.millis(30)))
      yield* settle
      expect(yield* wakeup.idle).toBe(1)
      yield* Fiber.join(fiber)
      expect(yield* wakeup.idle).toBe(0)
      // The timed-out wait took no token and left none behind: a signal now is kept for the next.
      yield* wakeup.signal(1)
      yield* wakeup.wait(LONG)
    }))

  it.live("an interrupted wait takes no token: the signal goes to the next wait", () =>
    Effect.gen(function* () {
      const wakeup = yield* makeWakeup(1)
      const fiber = yield* Effect.fork(wakeup.wait(LONG))
      yield* settle
      yield* Fiber.interrupt(fiber)
      expect(yield* wakeup.idle).toBe(0)
      yield* wakeup.signal(1)
      yield* wakeup.wait(LONG)
      expect(yield* wakeup.idle).toBe(0)
    }))
})
