import { describe, expect, layer } from "@effect/vitest"
import { tracingLayer } from "@svc/core/observability"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { startOtlpReceiver } from "../../../testing/otlpReceiver.js"
import { enqueue, WorkEngine, WorkHandler, WorkHandlers } from "../src/index.js"
import { DatabaseUrl, TestDatabase, untilState } from "./harness.js"
import { pgClientLayer } from "../../../testing/database.js"

describe("tracing of work", () => {
  layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("every attempt is a work.attempt span with its kind and id", () =>
      Effect.gen(function* () {
        const receiver = yield* Effect.promise(startOtlpReceiver)
        const url = yield* DatabaseUrl
        const scope = yield* Scope.make()
        const engine = WorkEngine.layer({ workerId: "traced", pollInterval: "200 millis" }).pipe(
          Layer.provide(WorkHandler.layer("traced.noop", Schema.Struct({}), () => Effect.void)),
          Layer.provide(WorkHandlers.layer),
          Layer.provide(pgClientLayer(url)),
          Layer.provide(tracingLayer({ endpoint: receiver.endpoint, serviceName: "svc-worker-under-test", exportInterval: "100 millis" }))
        )
        yield* Layer.buildWithScope(engine, scope)
        const { item } = yield* enqueue({ kind: "traced.noop", key: "one" })
        yield* untilState(item.id, "succeeded")
        // The item is `succeeded` once its outcome is written, a moment before the attempt (and
        // its span) ends: wait for the exporter (every 100 ms) to deliver it, then close.
        const attemptSpans = () => receiver.spans().filter((span) => span.name === "work.attempt")
        yield* Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => attemptSpans().length > 0, times: 200 }))
        yield* Scope.close(scope, Exit.void)
        const attempts = attemptSpans()
        expect(attempts.map((span) => span.serviceName)).toContain("svc-worker-under-test")
        expect(attempts.find((span) => span.attributes.id === item.id)?.attributes.kind).toBe("traced.noop")
        yield* Effect.promise(receiver.close)
      }))
  })
})
