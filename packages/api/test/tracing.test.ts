import { describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
import * as os from "node:os"
import { createDatabase, dropDatabase } from "../../../testing/database.js"
import { startOtlpReceiver } from "../../../testing/otlpReceiver.js"
import { freePort, svc } from "../../../testing/process.js"
import { call } from "../../../testing/server.js"

describe("tracing of a running process", () => {
  it("exports a span per HTTP request and per SQL statement, and the metrics, when OTEL_EXPORTER_OTLP_ENDPOINT is set", async () => {
    const receiver = await startOtlpReceiver()
    const url = await createDatabase()
    try {
      const port = await freePort()
      const env = {
        DATABASE_URL: url,
        SVC_PORT: String(port),
        SVC_DATA_DIR: path.join(os.tmpdir(), "svc-tracing"),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: "svc-api-under-test"
      }
      const migrate = svc("migrate", env)
      expect((await migrate.exited).code).toBe(0)
      const api = svc("api", env)
      let requestId = ""
      try {
        await api.waitFor(/svc api listening/)
        const ready = await call(`http://127.0.0.1:${port}/readyz`)
        expect(ready.status).toBe(200)
        requestId = ready.body.meta.requestId
      } finally {
        // Stopping flushes the exporter.
        expect((await api.stop()).code).toBe(0)
      }
      const spans = receiver.spans().filter((span) => span.serviceName === "svc-api-under-test")
      const names = spans.map((span) => span.name)
      expect(names).toEqual(expect.arrayContaining(["http.server GET", "Health.readiness", "sql.execute"]))
      expect(spans.some((span) => span.name === "http.server GET" && span.attributes["svc.request_id"] === requestId)).toBe(true)
      const migrations = receiver.spans().filter((span) => span.name === "Migrations.run")
      expect(migrations.length).toBeGreaterThanOrEqual(1)
      // Metrics go to <endpoint>/v1/metrics beside the spans, flushed at stop too; cumulative,
      // so the last export holds the request.
      const readiness = receiver
        .metrics()
        .filter((point) => point.serviceName === "svc-api-under-test" && point.name === "svc_http_requests_total")
        .filter((point) => point.attributes.route === "/readyz")
      expect(readiness.length).toBeGreaterThanOrEqual(1)
      expect(readiness[readiness.length - 1]).toMatchObject({
        attributes: { method: "GET", route: "/readyz", status: "200" },
        value: 1
      })
    } finally {
      await dropDatabase(url)
      await receiver.close()
    }
  }, 60_000)
})
