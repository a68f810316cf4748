/**
 * The HTTP pipeline makes the platform's request span (`http.server <method>`) only when spans
 * are exported (observability/spans.ts): a request served with Effect's native tracer runs
 * without a span; with an exporting tracer, the handler runs inside that request span.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { documented, withApiErrors } from "@svc/core/api"
import { httpPipeline } from "@svc/core/http"
import { Envelope } from "@svc/core/schema"
import { Effect, Layer, Option, Schema } from "effect"
import { recordingTracer } from "../../../testing/recordingTracer.js"
import { call, serveForTest, TestServer } from "../../../testing/server.js"

const ProbeApi = documented(withApiErrors(HttpApi.make("probe")).add(
  HttpApiGroup.make("probe").add(
    HttpApiEndpoint.get("span", "/span").addSuccess(Envelope(Schema.Struct({ span: Schema.NullOr(Schema.String) })))
  )
))

/** Answers the name of the span the handler runs in, or null. */
const ProbeLive = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  handlers.handle("span", () =>
    Effect.map(Effect.option(Effect.currentSpan), (span) => ({ span: Option.getOrNull(Option.map(span, (s) => s.name)) })))
)

const served = serveForTest(httpPipeline(ProbeApi, ProbeLive, { development: false, maxBodyBytes: 4096 }))

const spanSeen = Effect.gen(function* () {
  const { baseUrl } = yield* TestServer
  const answer = yield* Effect.promise(() => call(`${baseUrl}/span`))
  expect(answer.status).toBe(200)
  return answer.body.data.span as string | null
})

describe("the request span", () => {
  it.live("is not made with the native tracer", () =>
    Effect.scoped(Effect.gen(function* () {
      const context = yield* Layer.build(served)
      expect(yield* Effect.provide(spanSeen, context)).toBeNull()
    })))

  it.live("is made, and is the handler's span, with an exporting tracer", () => {
    const { spans, tracer } = recordingTracer()
    return Effect.scoped(Effect.gen(function* () {
      const context = yield* Layer.build(served.pipe(Layer.provide(Layer.setTracer(tracer))))
      expect(yield* Effect.provide(spanSeen, context)).toBe("http.server GET")
      expect(spans.map((span) => span.name)).toContain("http.server GET")
    }))
  })
})
