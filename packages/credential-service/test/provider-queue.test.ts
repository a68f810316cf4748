/**
 * Provider actions (SPEC 8): one at a time, at most 64 waiting; the next is refused at once with
 * ProviderBusy, and a place is given back when an action ends (succeeded, failed or interrupted).
 */
import { describe, expect, it } from "@effect/vitest"
import { CredentialServiceLimits } from "@svc/core/schema"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { makeProviderQueue, ProviderBusy } from "../src/upstream/providerQueue.js"

describe("provider action queue", () => {
  it.live("runs one action at a time; the 66th concurrent action is ProviderBusy; places come back", () =>
    Effect.gen(function* () {
      const queue = makeProviderQueue()
      const capacity = CredentialServiceLimits.providerActions + CredentialServiceLimits.queuedActions
      expect(capacity).toBe(65)
      const gate = yield* Deferred.make<void>()
      let running = 0
      let most = 0
      const action = Effect.acquireUseRelease(
        Effect.sync(() => (most = Math.max(most, ++running))),
        () => Deferred.await(gate),
        () => Effect.sync(() => void running--)
      )
      const fibers = yield* Effect.forEach(Array.from({ length: capacity }), () => Effect.fork(queue.run(action)))
      yield* Effect.yieldNow()
      expect(queue.pending()).toBe(capacity)
      expect(running).toBe(1)

      const refused = yield* Effect.exit(queue.run(Effect.succeed("never runs")))
      expect(refused).toEqual(Exit.fail(new ProviderBusy()))
      expect(Exit.isFailure(refused) && String(refused.cause)).toContain("busy")

      // One interrupted waiter gives its place back: the next action is admitted.
      yield* Fiber.interrupt(fibers[capacity - 1]!)
      expect(queue.pending()).toBe(capacity - 1)
      const admitted = yield* Effect.fork(queue.run(Effect.succeed("ran")))

      yield* Deferred.succeed(gate, undefined)
      yield* Effect.forEach(fibers.slice(0, capacity - 1), Fiber.join)
      expect(yield* Fiber.join(admitted)).toBe("ran")
      expect(most).toBe(1)
      expect(queue.pending()).toBe(0)
    }))

  it.effect("a failing action frees its place too", () =>
    Effect.gen(function* () {
      const queue = makeProviderQueue({ providerActions: 1, queuedActions: 0 })
      expect(yield* Effect.exit(queue.run(Effect.fail("upstream refused")))).toEqual(Exit.fail("upstream refused"))
      expect(queue.pending()).toBe(0)
      expect(yield* queue.run(Effect.succeed(1))).toBe(1)
    }))
})
