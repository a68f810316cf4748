/**
 * Request count and latency of an HTTP app, labelled with the route TEMPLATE the router matched
 * (`/namespaces/{namespaceId}/agents/{agentId}`), never the raw path.
 */
import type { HttpApp } from "@effect/platform"
import { HttpServerRequest } from "@effect/platform"
import { Effect, Exit, Metric, MetricLabel, Option, Tracer } from "effect"
import { httpRequestDuration, httpRequests } from "./instruments.js"

/** The label of requests no route matched (404, 405, bad targets). */
export const UNMATCHED_ROUTE = "unmatched"

/** The label of requests to an Agent host (native admin, SPEC 5.8), whatever their path. */
export const NATIVE_ADMIN_ROUTE = "native-admin"

/**
 * The platform router writes the matched route's path (`/a/:id`) to the request span as
 * `http.route`; it is the only place that knows which route matched, and reading it back costs a
 * map lookup. A request span is current whether or not traces are exported: the platform's, or
 * the bare one `withRequestId` makes in its place (observability/spans.ts).
 */
export const ROUTE_ATTRIBUTE = "http.route"

/** `/a/:id/b` -> `/a/{id}/b`, the OpenAPI spelling. */
export const routeTemplate = (path: string): string => path.replace(/:([^/]+)/g, "{$1}")

type Counter = Metric.Metric.Counter<number>
type Histogram = Metric.Metric.Histogram<number>

/**
 * A middleware recording `svc_http_requests_total` and `svc_http_request_duration_seconds`. The
 * tagged instruments are made once per label set and kept (a handful of routes, methods and
 * statuses), each with ONE label array: Effect caches a metric's registry hook by the identity
 * of that array, so a request allocates one small key string and no metric key (chained
 * `Metric.tagged` would merge into a new array, and look the key up, on every update). Must run
 * inside the server's request span and outside everything that can still change the status.
 */
export const makeHttpMetrics = () => {
  const templates = new Map<string, string>()
  const counters = new Map<string, Counter>()
  const histograms = new Map<string, Histogram>()

  const routeOf = (span: Option.Option<Tracer.AnySpan>): string => {
    if (Option.isNone(span) || span.value._tag !== "Span") return UNMATCHED_ROUTE
    const path = span.value.attributes.get(ROUTE_ATTRIBUTE)
    if (typeof path !== "string") return UNMATCHED_ROUTE
    let template = templates.get(path)
    if (template === undefined) {
      template = routeTemplate(path)
      templates.set(path, template)
    }
    return template
  }

  const counterOf = (method: string, route: string, status: number): Counter => {
    const key = `${method} ${status} ${route}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = Metric.taggedWithLabels(httpRequests, [
        MetricLabel.make("method", method),
        MetricLabel.make("route", route),
        MetricLabel.make("status", String(status))
      ])
      counters.set(key, counter)
    }
    return counter
  }

  const histogramOf = (method: string, route: string): Histogram => {
    const key = `${method} ${route}`
    let histogram = histograms.get(key)
    if (histogram === undefined) {
      histogram = Metric.taggedWithLabels(httpRequestDuration, [
        MetricLabel.make("method", method),
        MetricLabel.make("route", route)
      ])
      histograms.set(key, histogram)
    }
    return histogram
  }

  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const started = performance.now()
      return Effect.onExit(app, (exit) =>
        // An interrupted request (shutdown) has no status to count.
        Exit.isSuccess(exit)
          ? Effect.flatMap(Effect.serviceOption(Tracer.ParentSpan), (span) => {
              const route = routeOf(span)
              const seconds = (performance.now() - started) / 1000
              return Effect.zipRight(
                Metric.increment(counterOf(request.method, route, exit.value.status)),
                Metric.update(histogramOf(request.method, route), seconds)
              )
            })
          : Effect.void
      )
    })
}
