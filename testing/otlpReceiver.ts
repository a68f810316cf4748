/**
 * A real OTLP/HTTP receiver on loopback (what an OpenTelemetry collector does for
 * `POST /v1/traces` and `POST /v1/metrics` with JSON bodies), for tests of what the processes
 * export.
 */
import * as http from "node:http"

export interface ReceivedSpan {
  readonly name: string
  readonly serviceName: string | undefined
  readonly attributes: Record<string, unknown>
}

/** One data point of an exported metric (sums and gauges carry `value`, histograms `count`). */
export interface ReceivedMetricPoint {
  readonly name: string
  readonly serviceName: string | undefined
  readonly attributes: Record<string, unknown>
  readonly value?: number | undefined
  readonly count?: number | undefined
}

export interface OtlpReceiver {
  readonly endpoint: string
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  readonly metrics: () => ReadonlyArray<ReceivedMetricPoint>
  readonly close: () => Promise<void>
}

type KeyValue = { readonly key: string; readonly value: Record<string, unknown> }

const flatten = (attributes: ReadonlyArray<KeyValue> | undefined): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]))

type DataPoint = {
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly asInt?: number | string
  readonly asDouble?: number
  readonly count?: number | string
}
type MetricsBody = {
  resourceMetrics: ReadonlyArray<{
    resource?: { attributes?: ReadonlyArray<KeyValue> }
    scopeMetrics: ReadonlyArray<{
      metrics: ReadonlyArray<{
        name: string
        sum?: { dataPoints: ReadonlyArray<DataPoint> }
        gauge?: { dataPoints: ReadonlyArray<DataPoint> }
        histogram?: { dataPoints: ReadonlyArray<DataPoint> }
      }>
    }>
  }>
}

const metricPoints = (body: MetricsBody): Array<ReceivedMetricPoint> =>
  body.resourceMetrics.flatMap((resourceMetrics) => {
    const serviceName = flatten(resourceMetrics.resource?.attributes)["service.name"] as string | undefined
    return resourceMetrics.scopeMetrics.flatMap((scope) =>
      scope.metrics.flatMap((metric) => {
        const points = metric.sum?.dataPoints ?? metric.gauge?.dataPoints ?? metric.histogram?.dataPoints ?? []
        return points.map((point) => ({
          name: metric.name,
          serviceName,
          attributes: flatten(point.attributes),
          value: point.asDouble ?? (point.asInt === undefined ? undefined : Number(point.asInt)),
          count: point.count === undefined ? undefined : Number(point.count)
        }))
      })
    )
  })

export const startOtlpReceiver = (): Promise<OtlpReceiver> =>
  new Promise((resolve) => {
    const spans: Array<ReceivedSpan> = []
    const metrics: Array<ReceivedMetricPoint> = []
    const server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/metrics") {
          metrics.push(...metricPoints(JSON.parse(Buffer.concat(chunks).toString("utf8")) as MetricsBody))
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
          return
        }
        if (request.method !== "POST" || request.url !== "/v1/traces") {
          response.writeHead(404).end()
          return
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: ReadonlyArray<{
            resource?: { attributes?: ReadonlyArray<KeyValue> }
            scopeSpans: ReadonlyArray<{ spans: ReadonlyArray<{ name: string; attributes?: ReadonlyArray<KeyValue> }> }>
          }>
        }
        for (const resourceSpans of body.resourceSpans) {
          const serviceName = flatten(resourceSpans.resource?.attributes)["service.name"] as string | undefined
          for (const scope of resourceSpans.scopeSpans) {
            for (const span of scope.spans) {
              spans.push({ name: span.name, serviceName, attributes: flatten(span.attributes) })
            }
          }
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        endpoint: `http://127.0.0.1:${port}`,
        spans: () => spans,
        metrics: () => metrics,
        close: () => new Promise((done) => server.close(() => done()))
      })
    })
  })
