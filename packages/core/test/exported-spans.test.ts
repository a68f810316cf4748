/**
 * Spans only when they leave the process (observability/spans.ts): with Effect's native tracer
 * no span is made; with any other tracer (OTLP in production, a recording one here) the same
 * spans as `Effect.withSpan` and `Effect.fn` make, names, nesting and attributes included.
 */
import { describe, expect, it } from "@effect/vitest"
import { exportedFn, spansExported, withExportedSpan } from "@svc/core/observability"
import { Effect, Option } from "effect"
import { recordingTracer } from "../../../testing/recordingTracer.js"

const currentSpanName = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))

describe("spans only when exported", () => {
  it.effect("with the native tracer: no span, and the effect, its arguments and pipeable steps run as before", () =>
    Effect.gen(function* () {
      expect(yield* spansExported).toBe(false)
      expect(yield* withExportedSpan(currentSpanName, "Quiet.span")).toEqual(Option.none())
      expect(yield* currentSpanName.pipe(withExportedSpan("Quiet.pipe", { attributes: { a: 1 } }))).toEqual(Option.none())

      const seen: Array<unknown> = []
      const generator = exportedFn("Things.add")(
        function* (a: number, b: number) {
          seen.push(yield* currentSpanName)
          return a + b
        },
        (effect, a) => Effect.map(effect, (sum) => sum * 10 + a)
      )
      expect(yield* generator(2, 3)).toBe(52)
      const plain = exportedFn("Things.twice")((n: number) => Effect.succeed(n * 2))
      expect(yield* plain(21)).toBe(42)
      expect(seen).toEqual([Option.none()])
    }))

  it.effect("with an exporting tracer: named spans, nested, with attributes, the pipeable steps inside", () => {
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function* () {
      expect(yield* spansExported).toBe(true)
      const inner = withExportedSpan(currentSpanName, "Inner.read", { attributes: { table: "things" } })
      const outer = exportedFn("Things.deploy")(
        function* (id: string) {
          yield* Effect.annotateCurrentSpan("thing.id", id)
          return yield* inner
        },
        (effect) => Effect.zip(effect, currentSpanName)
      )
      const [innerName, stepName] = yield* outer("thg_1")
      expect(innerName).toEqual(Option.some("Inner.read"))
      expect(stepName).toEqual(Option.some("Things.deploy"))
      expect(spans.map(({ name, parent }) => ({ name, parent }))).toEqual([
        { name: "Things.deploy", parent: undefined },
        { name: "Inner.read", parent: "Things.deploy" }
      ])
      expect(spans[0]!.attributes.get("thing.id")).toBe("thg_1")
      expect(spans[1]!.attributes.get("table")).toBe("things")
    }).pipe(Effect.withTracer(tracer))
  })

  it.effect("a failure passes through unchanged either way", () => {
    const { tracer } = recordingTracer()
    const failing = exportedFn("Things.fail")(function* () {
      return yield* Effect.fail("no" as const)
    })
    return Effect.gen(function* () {
      expect(yield* Effect.flip(failing())).toBe("no")
      expect(yield* Effect.flip(failing().pipe(Effect.withTracer(tracer)))).toBe("no")
    })
  })
})
