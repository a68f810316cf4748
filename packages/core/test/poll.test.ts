/**
 * `until` from testing/poll.ts waits on real processes, so its pause must be a real timer even
 * inside `it.effect`, where the TestClock holds `Effect.sleep` until a test adjusts it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { until } from "../../../testing/poll.js"

describe("until", () => {
  it.effect("polls on wall-clock time under the TestClock", () =>
    Effect.gen(function* () {
      const readyAt = Date.now() + 600
      let reads = 0
      const read = Effect.sync(() => {
        reads += 1
        return Date.now() >= readyAt
      })
      const value = yield* until(read, (ready) => ready, 10)
      expect(value).toBe(true)
      // Three or four reads 250 ms apart reach a state 600 ms away; a stuck pause would hang here.
      expect(reads).toBeGreaterThanOrEqual(3)
      expect(reads).toBeLessThanOrEqual(6)
    }))

  it.effect("dies with the last value when a fixed budget is spent", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(until(Effect.succeed({ state: "queued" }), () => false, 0.5, () => " (explained)"))
      expect(Exit.isFailure(exit)).toBe(true)
      const message = Exit.isFailure(exit) ? String(exit.cause._tag === "Die" ? (exit.cause.defect as Error).message : "") : ""
      expect(message).toBe(`not reached in 0.5 s: {"state":"queued"} (explained)`)
    }))
})
