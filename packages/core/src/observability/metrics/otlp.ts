/**
 * Metrics over OTLP/HTTP (JSON) with @effect/opentelemetry's own exporter, beside the traces:
 * on only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; the registry is sent to
 * `<endpoint>/v1/metrics` every interval and once more when the Layer closes.
 */
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { type Duration, Layer } from "effect"

export interface OtlpMetricsOptions {
  /** OTLP/HTTP base URL, e.g. `http://127.0.0.1:4318`. */
  readonly endpoint: string
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** How often the registry is sent (default 10 seconds). */
  readonly exportInterval?: Duration.DurationInput | undefined
}

export const metricsUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/metrics`

export const otlpMetricsLayer = (options: OtlpMetricsOptions): Layer.Layer<never> =>
  OtlpMetrics.layer({
    url: metricsUrl(options.endpoint),
    resource: { serviceName: options.serviceName, serviceVersion: options.serviceVersion },
    exportInterval: options.exportInterval ?? "10 seconds"
  }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
