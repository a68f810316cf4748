import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Random } from "effect"
import { backoffCeiling, backoffDelay } from "../src/index.js"

const policy = { base: Duration.seconds(1), cap: Duration.seconds(60) }

describe("backoff", () => {
  it("doubles from the base up to the cap", () => {
    const ceilings = [1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => Duration.toMillis(backoffCeiling(policy, n)))
    expect(ceilings).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000])
  })

  it.effect("draws the delay uniformly from [0, ceiling) (full jitter)", () =>
    Effect.gen(function* () {
      const delays = yield* Effect.forEach([1, 3, 7], (attempt) => backoffDelay(policy, attempt)).pipe(
        Effect.withRandom(Random.fixed([0, 0.5, 0.999999]))
      )
      expect(delays.map(Duration.toMillis)).toEqual([0, 2000, 59999])
    }))

  it.effect("stays within bounds for any random draw", () =>
    Effect.gen(function* () {
      for (let attempt = 1; attempt <= 12; attempt++) {
        const ceiling = Duration.toMillis(backoffCeiling(policy, attempt))
        for (let i = 0; i < 50; i++) {
          const delay = Duration.toMillis(yield* backoffDelay(policy, attempt))
          expect(delay).toBeGreaterThanOrEqual(0)
          expect(delay).toBeLessThan(ceiling)
        }
      }
    }).pipe(Effect.withRandom(Random.make("backoff-bounds"))))
})
