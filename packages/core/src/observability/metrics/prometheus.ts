/**
 * The Prometheus text endpoint (`SVC_METRICS_PORT`): `GET /metrics` on a separate admin
 * listener, unauthenticated, so it must stay on a private address (default 127.0.0.1).
 * Effect's metric registry is turned into OpenTelemetry metric data by @effect/opentelemetry's
 * producer and written in the exposition format by @opentelemetry/exporter-prometheus's
 * serializer (docs/decisions/metrics.md).
 */
import * as Metrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { Effect, Layer, Option, Runtime } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { TelemetrySettings } from "../../config/process.js"

export const METRICS_PATH = "/metrics"
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

export interface MetricsEndpointOptions {
  readonly host: string
  /** 0 picks a free port (logged). */
  readonly port: number
  readonly serviceName: string
}

const plain = (response: http.ServerResponse, status: number, text: string, headers: http.OutgoingHttpHeaders = {}) =>
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers }).end(text)

const pathOf = (url: string | undefined): string => {
  const target = url ?? "/"
  const query = target.indexOf("?")
  return query === -1 ? target : target.slice(0, query)
}

const listen = (server: http.Server, options: MetricsEndpointOptions) =>
  Effect.async<AddressInfo, Error>((resume) => {
    const failed = (error: Error) => resume(Effect.fail(error))
    server.once("error", failed)
    server.listen(options.port, options.host, () => {
      server.off("error", failed)
      resume(Effect.succeed(server.address() as AddressInfo))
    })
  })

const close = (server: http.Server) =>
  Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  })

const serve = (options: MetricsEndpointOptions) =>
  Effect.gen(function* () {
    const producer = yield* Metrics.makeProducer
    // No scope labels on every sample; `target_info` still names the service.
    const serializer = new PrometheusSerializer(undefined, false, undefined, false, true)
    const runtime = yield* Effect.runtime<never>()
    const render = Effect.promise(() => producer.collect()).pipe(
      Effect.map((collected) => serializer.serialize(collected.resourceMetrics))
    )
    const server = http.createServer((request, response) => {
      if (pathOf(request.url) !== METRICS_PATH) return plain(response, 404, "not found\n")
      if (request.method !== "GET" && request.method !== "HEAD") {
        return plain(response, 405, "method not allowed\n", { allow: "GET, HEAD" })
      }
      Runtime.runCallback(runtime)(render, {
        onExit: (exit) => {
          if (exit._tag === "Success") plain(response, 200, exit.value, { "content-type": PROMETHEUS_CONTENT_TYPE })
          else plain(response, 500, "metrics could not be collected\n")
        }
      })
    })
    const address = yield* Effect.acquireRelease(listen(server, options), () => close(server)).pipe(
      Effect.mapError((error) => new Error(`SVC_METRICS_PORT: cannot listen on ${options.host}:${options.port} (${error.message})`)),
      Effect.orDie
    )
    const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}${METRICS_PATH}`
    yield* Effect.logInfo(`svc metrics listening on ${url}`).pipe(Effect.annotateLogs({ url }))
  })

/** The endpoint, open while the Layer is. */
export const prometheusEndpointLayer = (options: MetricsEndpointOptions): Layer.Layer<never> =>
  Layer.scopedDiscard(serve(options)).pipe(Layer.provide(Resource.layer({ serviceName: options.serviceName })))

/** The endpoint when `SVC_METRICS_PORT` is set; nothing (no port opened) when it is not. */
export const metricsEndpointLayer = (settings: TelemetrySettings): Layer.Layer<never> =>
  Option.match(settings.metricsPort, {
    onNone: () => Layer.empty,
    onSome: (port) => prometheusEndpointLayer({ host: settings.metricsHost, port, serviceName: settings.serviceName })
  })
