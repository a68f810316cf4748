/**
 * Tracing over OTLP/HTTP (JSON) with the pure-Effect exporter of @effect/opentelemetry; on only
 * when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. Spans come from `Effect.fn` / `Effect.withSpan`.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { type Duration, Layer } from "effect"

export interface TracingOptions {
  /** OTLP/HTTP base URL, e.g. `http://127.0.0.1:4318`; spans go to `<endpoint>/v1/traces`. */
  readonly endpoint: string
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** How often batches are sent (default 5 seconds); the rest is flushed when the Layer closes. */
  readonly exportInterval?: Duration.DurationInput | undefined
}

export const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/traces`

export const tracingLayer = (options: TracingOptions): Layer.Layer<never> =>
  OtlpTracer.layer({
    url: tracesUrl(options.endpoint),
    resource: { serviceName: options.serviceName, serviceVersion: options.serviceVersion },
    exportInterval: options.exportInterval
  }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
