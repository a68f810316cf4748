/**
 * The HTTP pipeline makes the platform's request span (`http.server <method>`) only when spans
 * are exported (observability/spans.ts). With Effect's native tracer the request runs in a bare
 * native span instead, which the router still labels with the matched route (the HTTP metrics
 * read it) and which carries none of the platform span's URL and header attributes; with an
 * exporting tracer, the handler runs inside the platform's span, and the tracer receives it.
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
    HttpApiEndpoint.get("span", "/span").addSuccess(Envelope(Schema.Struct({ span: Schema.NullOr(Schema.String), attributes: Schema.Array(Schema.String) })))
  )
))

/** Answers the name of the span the handler runs in (or null) and its attribute names. */
const ProbeLive = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  handlers.handle("span", () =>
    Effect.map(Effect.option(Effect.currentSpan), (span) => ({
      span: Option.getOrNull(Option.map(span, (s) => s.name)),
      attributes: Option.match(span, { onNone: () => [], onSome: (s) => [...s.attributes.keys()].sort() })
    })))
)

const served = serveForTest(httpPipeline(ProbeApi, ProbeLive, { development: false, maxBodyBytes: 4096 }))

const spanSeen = Effect.gen(function* () {
  const { baseUrl } = yield* TestServer
  const answer = yield* Effect.promise(() => call(`${baseUrl}/span`))
  expect(answer.status).toBe(200)
  return answer.body.data as { span: string | null; attributes: Array<string> }
})

describe("the request span", () => {
  it.live("is a bare span with the matched route only, with the native tracer", () =>
    Effect.scoped(Effect.gen(function* () {
      const context = yield* Layer.build(served)
      expect(yield* Effect.provide(spanSeen, context)).toEqual({ span: "http.server GET", attributes: ["http.route"] })
    })))

  it.live("is made, and is the handler's span, with an exporting tracer", () => {
    const { spans, tracer } = recordingTracer()
    return Effect.scoped(Effect.gen(function* () {
      const context = yield* Layer.build(served.pipe(Layer.provide(Layer.setTracer(tracer))))
      const seen = yield* Effect.provide(spanSeen, context)
      expect(seen.span).toBe("http.server GET")
      expect(seen.attributes).toEqual(expect.arrayContaining(["http.request.method", "http.route", "url.full", "url.path"]))
      expect(spans.map((span) => span.name)).toContain("http.server GET")
    }))
  })
})
