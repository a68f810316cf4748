/**
 * Tracing against a real OTLP/HTTP receiver on loopback: a tiny node:http server that accepts
 * `POST /v1/traces` with JSON bodies, as an OpenTelemetry collector would.
 */
import { describe, expect, it } from "@effect/vitest"
import { loggerLayer, ObservabilityLive, tracingLayer } from "@svc/core/observability"
import { type Console, ConfigProvider, Effect, Layer, LogLevel } from "effect"
import * as http from "node:http"

interface OtlpKeyValue {
  readonly key: string
  readonly value: { readonly stringValue?: string; readonly intValue?: string | number }
}
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: ReadonlyArray<OtlpKeyValue>
}
interface OtlpTraces {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<OtlpKeyValue> }
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<OtlpSpan> }>
  }>
}
interface Received {
  readonly method: string
  readonly path: string
  readonly contentType: string
  readonly body: OtlpTraces
}

/** A loopback OTLP/HTTP receiver for the scope of a test. */
const otlpReceiver = Effect.acquireRelease(
  Effect.async<{ readonly endpoint: string; readonly received: Array<Received>; readonly server: http.Server }>((resume) => {
    const received: Array<Received> = []
    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/traces") {
          received.push({
            method: request.method,
            path: request.url,
            contentType: request.headers["content-type"] ?? "",
            body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpTraces
          })
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        } else {
          response.writeHead(404).end()
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({ endpoint: `http://127.0.0.1:${port}`, received, server }))
    })
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

const spansOf = (received: ReadonlyArray<Received>) =>
  received.flatMap((r) =>
    r.body.resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) =>
        ss.spans.map((span) => ({
          span,
          serviceName: rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue
        }))
      )
    )
  )

describe("tracing", () => {
  it.scopedLive("exports spans over OTLP/HTTP with the service name", () =>
    Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const child = Effect.sleep("5 millis").pipe(Effect.withSpan("Agents.loadRevision"))
      const parent = Effect.fn("Agents.deploy")(function*(agentId: string) {
        yield* Effect.annotateCurrentSpan("agent.id", agentId)
        yield* child
      })
      // Providing the Layer and leaving its scope flushes what is buffered.
      yield* parent("agt_1").pipe(Effect.provide(tracingLayer({ endpoint: receiver.endpoint, serviceName: "svc-test" })))

      expect(receiver.received.length).toBeGreaterThan(0)
      expect(receiver.received[0]).toMatchObject({ method: "POST", path: "/v1/traces", contentType: "application/json" })
      const spans = spansOf(receiver.received)
      const deploy = spans.find((s) => s.span.name === "Agents.deploy")
      const load = spans.find((s) => s.span.name === "Agents.loadRevision")
      expect(deploy?.serviceName).toBe("svc-test")
      expect(deploy?.span.attributes).toContainEqual({ key: "agent.id", value: { stringValue: "agt_1" } })
      expect(load?.span.traceId).toBe(deploy?.span.traceId)
      expect(load?.span.parentSpanId).toBe(deploy?.span.spanId)
    }))

  it.scopedLive("is enabled by OTEL_EXPORTER_OTLP_ENDPOINT, named by OTEL_SERVICE_NAME, and logs carry the trace id", () =>
    Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const lines: Array<string> = []
      const base = yield* Effect.console
      const capture: Console.Console = {
        ...base,
        unsafe: { ...base.unsafe, log: (...args: ReadonlyArray<unknown>) => void lines.push(args.map(String).join(" ")) }
      }
      yield* Effect.logInfo("inside").pipe(
        Effect.withSpan("Namespaces.provision"),
        Effect.provide(ObservabilityLive),
        Effect.withConsole(capture),
        Effect.withConfigProvider(ConfigProvider.fromMap(
          new Map([["OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint], ["OTEL_SERVICE_NAME", "svc-worker"]])
        ))
      )
      const spans = spansOf(receiver.received)
      const provision = spans.find((s) => s.span.name === "Namespaces.provision")
      expect(provision?.serviceName).toBe("svc-worker")
      const record = JSON.parse(lines[0] ?? "{}") as { traceId?: string; spanId?: string }
      expect(record.traceId).toBe(provision?.span.traceId)
      expect(record.spanId).toBe(provision?.span.spanId)
    }))

  it.scopedLive("sends nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset", () =>
    Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      yield* Effect.void.pipe(
        Effect.withSpan("Quiet.span"),
        Effect.provide(Layer.merge(ObservabilityLive, loggerLayer(LogLevel.None))),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
      )
      expect(receiver.received).toEqual([])
    }))
})
