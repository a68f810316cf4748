import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Schema } from "effect"
import { WorkHandler, WorkHandlers } from "../src/index.js"
import { resolveOptions } from "../src/engine/options.js"

describe("engine options", () => {
  it("fills in defaults", () => {
    const options = resolveOptions({ workerId: "w1" })
    expect(options.workerId).toBe("w1")
    expect(options.concurrency).toBe(4)
    expect(Duration.toMillis(options.pollInterval)).toBe(2_000)
    expect(Duration.toMillis(options.leaseDuration)).toBe(30_000)
    expect(Duration.toMillis(options.leaseRenewInterval)).toBe(10_000)
    expect(Duration.toMillis(options.reapInterval)).toBe(10_000)
    expect(Duration.toMillis(options.backoff.base)).toBe(1_000)
    expect(Duration.toMillis(options.backoff.cap)).toBe(300_000)
    expect(resolveOptions().workerId).toMatch(/^.+:\d+:[0-9a-f]{8}$/)
  })

  it("rejects values that cannot work", () => {
    expect(() => resolveOptions({ concurrency: 0 })).toThrow(/concurrency/)
    expect(() => resolveOptions({ concurrency: 1.5 })).toThrow(/concurrency/)
    expect(() => resolveOptions({ leaseDuration: 0 })).toThrow(/leaseDuration/)
    expect(() => resolveOptions({ leaseDuration: "1 second", leaseRenewInterval: "2 seconds" })).toThrow(
      /leaseRenewInterval/
    )
    expect(() => resolveOptions({ backoff: { base: "10 seconds", cap: "1 second" } })).toThrow(/backoff.cap/)
    expect(() => resolveOptions({ workerId: "" })).toThrow(/workerId/)
  })
})

describe("handler registry", () => {
  it.effect("lists registered kinds and refuses a second handler for a kind", () =>
    Effect.gen(function* () {
      const a = WorkHandler.layer("kind.a", Schema.Unknown, () => Effect.void)
      const b = WorkHandler.layer("kind.b", Schema.Unknown, () => Effect.void)
      const kinds = yield* Effect.flatMap(WorkHandlers, (registry) => registry.kinds).pipe(
        Effect.provide(Layer.mergeAll(a, b).pipe(Layer.provideMerge(WorkHandlers.layer)))
      )
      expect(kinds).toEqual(["kind.a", "kind.b"])

      const twice = Layer.mergeAll(a, WorkHandler.layer("kind.a", Schema.Unknown, () => Effect.void))
      const exit = yield* Effect.exit(Effect.provide(Effect.void, twice.pipe(Layer.provide(WorkHandlers.layer))))
      expect(Exit.isFailure(exit) && !Exit.isInterrupted(exit)).toBe(true)
    }))

  it.scoped("unregisters a handler when its layer is released", () =>
    Effect.gen(function* () {
      const registry = yield* WorkHandlers
      const handler = WorkHandler.layer("kind.scoped", Schema.Unknown, () => Effect.void)
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(handler)
          expect(yield* registry.kinds).toEqual(["kind.scoped"])
        })
      )
      expect(yield* registry.kinds).toEqual([])
    }).pipe(Effect.provide(WorkHandlers.layer)))
})
