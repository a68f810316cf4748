/**
 * Logs, traces and metrics for every process: JSON lines on stdout with secrets scrubbed, OTLP
 * traces and metrics when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and the Prometheus endpoint
 * (`metricsEndpointLayer`) that the API and worker mains open when `SVC_METRICS_PORT` is set.
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import type { ConfigError } from "effect"
import { type TelemetrySettings, TelemetryConfig } from "../config/process.js"
import type { LogFormat } from "./logFormat.js"
import { loggerLayer } from "./logger.js"
import { KnownSecrets } from "./scrub.js"
import { otlpMetricsLayer } from "./metrics/otlp.js"
import { tracingLayer } from "./tracing.js"

export { jsonLineLogger, jsonLogger, loggerLayer, type LogRecord } from "./logger.js"
export { type LogFormat, selectLogFormat } from "./logFormat.js"
export { type PrettyOptions, prettyLineLogger, prettyLogger } from "./prettyLogger.js"
export {
  currentKnownSecrets,
  isSecretKey,
  KnownSecrets,
  maskText,
  MIN_SECRET_LENGTH,
  REDACTED,
  scrub
} from "./scrub.js"
export { annotateExportedSpan, bareRequestSpan, exportedFn, spansExported, withExportedSpan } from "./spans.js"
export { tracesUrl, tracingLayer, type TracingOptions } from "./tracing.js"
export * as SvcMetrics from "./metrics/instruments.js"
export { makeHttpMetrics, NATIVE_ADMIN_ROUTE, ROUTE_ATTRIBUTE, routeTemplate, UNMATCHED_ROUTE } from "./metrics/httpMetrics.js"
export { metricsUrl, otlpMetricsLayer, type OtlpMetricsOptions } from "./metrics/otlp.js"
export {
  METRICS_PATH,
  metricsEndpointLayer,
  type MetricsEndpointOptions,
  PROMETHEUS_CONTENT_TYPE,
  prometheusEndpointLayer
} from "./metrics/prometheus.js"

/** Logger and (when an endpoint is given) OTLP traces and metrics from already read settings. */
export const observabilityLayer = (
  settings: TelemetrySettings,
  options?: {
    readonly secrets?: Iterable<string | Redacted.Redacted<string>> | undefined
    readonly format?: LogFormat | undefined
  }
): Layer.Layer<never> => {
  const tracing = Option.match(settings.otlpEndpoint, {
    onNone: () => Layer.empty,
    onSome: (endpoint) =>
      Layer.merge(
        tracingLayer({ endpoint, serviceName: settings.serviceName }),
        otlpMetricsLayer({ endpoint, serviceName: settings.serviceName })
      )
  })
  return Layer.mergeAll(loggerLayer(settings.logLevel, options?.format), tracing, KnownSecrets.layer(options?.secrets ?? []))
}

const databasePassword = (url: string): ReadonlyArray<string> => {
  try {
    const password = new URL(url).password
    return password === "" ? [] : [password, decodeURIComponent(password)]
  } catch {
    return []
  }
}

/** A secret variable of the environment and the text forms in which it could leak. */
const secretVariable = (name: string, forms: (value: string) => ReadonlyArray<string>) =>
  Config.option(Config.redacted(name)).pipe(
    Config.map(Option.match({ onNone: () => [], onSome: (value) => forms(Redacted.value(value)) }))
  )

/**
 * Secrets that the environment holds directly: masked even before the full configuration is
 * loaded (main.ts adds the rest, e.g. generated development secrets, with `KnownSecrets.layer`).
 */
const environmentSecrets: Config.Config<ReadonlyArray<string>> = Config.all([
  secretVariable("SVC_AUTH_SECRET", (v) => [v]),
  secretVariable("SVC_SECRET_KEY", (v) => [v]),
  secretVariable("SVC_DEV_ADMIN_PASSWORD", (v) => [v]),
  secretVariable("DATABASE_URL", databasePassword)
]).pipe(Config.map((forms) => forms.flat()))

/**
 * `SVC_LOG_LEVEL`, `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_SERVICE_NAME` read with Effect
 * `Config`; secret variables of the environment are masked in every log line.
 */
export const ObservabilityLive: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.all([TelemetryConfig, environmentSecrets]).pipe(
    Effect.map(([settings, secrets]) => observabilityLayer(settings, { secrets }))
  )
)
