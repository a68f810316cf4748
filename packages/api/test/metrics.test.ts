/**
 * Metrics of the real processes (DESIGN §18, docs/decisions/metrics.md): `svc api` and
 * `svc worker` with `SVC_METRICS_PORT` set serve `GET /metrics` in the Prometheus text format,
 * read here with a real exposition-format parser; `svc start` serves one endpoint with both
 * halves; unset, no port is opened; a bad port stops the process with exit 78. The OTLP export
 * of the same instruments is asserted with the traces' (tracing.test.ts).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { createDatabase, dropDatabase, pgClientLayer } from "../../../testing/database.js"
import { bindInstallationAdmin } from "../../../testing/identity.js"
import { listeningPorts } from "../../../testing/listeningPorts.js"
import { freePort, svc, type SvcProcess } from "../../../testing/process.js"
import { family, histogramBuckets, histogramCount, type Scrape, samples, scrape, value } from "../../../testing/prometheus.js"
import { call } from "../../../testing/server.js"
import { seedServiceKey } from "./support/iamServer.js"

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-metrics-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const AUTH_SECRET = "metrics-test-auth-secret-never-exported-0123456789"
const AGENT_ROUTE = "/namespaces/{namespaceId}/agents/{agentId}"
const REQUESTS = "svc_http_requests_total"
const DURATION = "svc_http_request_duration_seconds"
const TRANSITIONS = "svc_work_transitions_total"

/** A key of an Installation administrator, seeded straight into the database. */
const seedAdminKey = (url: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const seeded = yield* seedServiceKey("metrics-admin")
      yield* bindInstallationAdmin(seeded.principalId)
      return seeded
    }).pipe(Effect.provide(pgClientLayer(url)), Effect.scoped)
  )

/** A queued item, due for 90 seconds, of a kind no worker runs. */
const insertUnclaimedItem = (url: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO work_items (id, kind, key, payload, next_attempt_at, deadline_at)
        VALUES (${crypto.randomUUID()}, 'metrics.unclaimed', 'k', '{}'::jsonb,
                now() - interval '90 seconds', now() + interval '1 hour')
      `
    }).pipe(Effect.provide(pgClientLayer(url)), Effect.scoped)
  )

const randomId = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`

/** Polls a scrape until `done` holds (the worker samples its queue every few seconds). */
const scrapeUntil = async (url: string, done: (scraped: Scrape) => boolean, what: string): Promise<Scrape> => {
  const deadline = Date.now() + 45_000
  for (;;) {
    const scraped = await scrape(url)
    if (done(scraped)) return scraped
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${scraped.text}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

const stopAll = async (processes: ReadonlyArray<SvcProcess>) => {
  for (const child of processes) expect((await child.stop()).code).toBe(0)
}

describe("the Prometheus endpoint of svc api and svc worker", () => {
  it("counts requests by route template and status, and work by kind, with no ids or secrets in labels", async () => {
    const url = await createDatabase()
    const [apiPort, apiMetricsPort, workerMetricsPort] = [await freePort(), await freePort(), await freePort()]
    const env = { DATABASE_URL: url, SVC_DATA_DIR: path.join(scratch, "split"), SVC_AUTH_SECRET: AUTH_SECRET }
    const started: Array<SvcProcess> = []
    try {
      expect((await svc("migrate", env).exited).code).toBe(0)
      const admin = await seedAdminKey(url)
      const api = svc("api", { ...env, SVC_PORT: String(apiPort), SVC_METRICS_PORT: String(apiMetricsPort) })
      started.push(api)
      const worker = svc("worker", { ...env, SVC_METRICS_PORT: String(workerMetricsPort) })
      started.push(worker)
      await api.waitFor(/svc api listening/)
      await api.waitFor(new RegExp(`svc metrics listening on http://127\\.0\\.0\\.1:${apiMetricsPort}/metrics`))
      await worker.waitFor(new RegExp(`svc metrics listening on http://127\\.0\\.0\\.1:${workerMetricsPort}/metrics`))
      const apiMetrics = `http://127.0.0.1:${apiMetricsPort}/metrics`
      const workerMetrics = `http://127.0.0.1:${workerMetricsPort}/metrics`
      const base = `http://127.0.0.1:${apiPort}`

      const before = await scrape(apiMetrics)
      expect(before.status).toBe(200)
      expect(before.contentType).toBe("text/plain; version=0.0.4; charset=utf-8")

      // Three unauthenticated reads of an Agent: routed, then refused by authentication.
      const ids = [randomId("ns"), randomId("ns"), randomId("ns")]
      for (const id of ids) {
        const answer = await call(`${base}/namespaces/${id}/agents/${randomId("agt")}`)
        expect(answer.status).toBe(401)
      }
      // Two paths no route serves.
      for (const suffix of ["a", "b"]) expect((await call(`${base}/no-such-route-${suffix}`)).status).toBe(404)
      // A Namespace created: its provisioning is enqueued, and the worker runs it.
      const created = await call(`${base}/namespaces`, {
        method: "POST",
        headers: { ...admin.headers, "content-type": "application/json" },
        body: JSON.stringify({ name: "metrics-team" })
      })
      expect(created.status).toBe(201)
      const namespaceId = created.body.data.id as string
      // A due item no worker runs: its age is the queue's age.
      await insertUnclaimedItem(url)

      const after = await scrape(apiMetrics)
      const agentRead = { method: "GET", route: AGENT_ROUTE, status: "401" }
      expect(value(after, REQUESTS, agentRead) - value(before, REQUESTS, agentRead)).toBe(3)
      const unmatched = { method: "GET", route: "unmatched", status: "404" }
      expect(value(after, REQUESTS, unmatched) - value(before, REQUESTS, unmatched)).toBe(2)
      const create = { method: "POST", route: "/namespaces", status: "201" }
      expect(value(after, REQUESTS, create) - value(before, REQUESTS, create)).toBe(1)
      const agentTiming = { method: "GET", route: AGENT_ROUTE }
      expect(histogramCount(after, DURATION, agentTiming) - histogramCount(before, DURATION, agentTiming)).toBe(3)
      expect(family(after, REQUESTS)?.type).toBe("COUNTER")
      expect(family(after, DURATION)?.type).toBe("HISTOGRAM")
      const buckets = histogramBuckets(after, DURATION, agentTiming)
      expect(buckets.map(([le]) => le)).toEqual(["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"])
      // Cumulative, ending in every request.
      const counts = buckets.map(([, count]) => count)
      expect(counts).toEqual([...counts].sort((a, b) => a - b))
      expect(counts[counts.length - 1]).toBe(histogramCount(after, DURATION, agentTiming))
      // The route labels are the templates of the requests made, or `unmatched`: no raw path.
      expect(new Set(samples(after, REQUESTS).map((sample) => sample.labels?.route))).toEqual(
        new Set([AGENT_ROUTE, "unmatched", "/namespaces"])
      )
      for (const id of [...ids, namespaceId]) expect(after.text).not.toContain(id)
      expect(after.text).not.toContain("no-such-route")
      expect(after.text).not.toContain(admin.key)
      expect(after.text).not.toContain(AUTH_SECRET)

      // The worker: the claim and the success of the provisioning, its queue sampled.
      const kind = { kind: "namespace.provision" }
      const work = await scrapeUntil(
        workerMetrics,
        (s) =>
          value(s, TRANSITIONS, { ...kind, to: "succeeded" }) >= 1 &&
          value(s, "svc_work_queue_oldest_age_seconds", { kind: "metrics.unclaimed" }) >= 90,
        "the provisioning to succeed and the queue to be sampled"
      )
      expect(value(work, TRANSITIONS, { ...kind, to: "running" })).toBe(1)
      expect(value(work, TRANSITIONS, { ...kind, to: "succeeded" })).toBe(1)
      expect(histogramCount(work, "svc_work_claim_latency_seconds", kind)).toBe(1)
      expect(value(work, "svc_work_items", { kind: "metrics.unclaimed", state: "queued" })).toBe(1)
      expect(family(work, "svc_work_queue_oldest_age_seconds")?.type).toBe("GAUGE")
      expect(family(work, "svc_work_items")?.type).toBe("GAUGE")
      expect(work.text).not.toContain(namespaceId)
      expect(work.text).not.toContain(AUTH_SECRET)

      // Only GET /metrics is served.
      const other = await fetch(`http://127.0.0.1:${apiMetricsPort}/other`)
      expect(other.status).toBe(404)
      expect((await fetch(`http://127.0.0.1:${apiMetricsPort}/`)).status).toBe(404)
      const posted = await fetch(apiMetrics, { method: "POST", body: "x" })
      expect(posted.status).toBe(405)
      expect(posted.headers.get("allow")).toBe("GET, HEAD")
    } finally {
      await stopAll(started)
      await dropDatabase(url)
    }
  }, 120_000)

  it("opens no port when SVC_METRICS_PORT is unset", async () => {
    const url = await createDatabase()
    const port = await freePort()
    const env = { DATABASE_URL: url, SVC_DATA_DIR: path.join(scratch, "off"), SVC_PORT: String(port) }
    const started: Array<SvcProcess> = []
    try {
      expect((await svc("migrate", env).exited).code).toBe(0)
      const api = svc("api", env)
      started.push(api)
      const worker = svc("worker", env)
      started.push(worker)
      await api.waitFor(/svc api listening/)
      await worker.waitFor(/work engine started/)
      expect(listeningPorts(api.child.pid!)).toEqual([port])
      expect(listeningPorts(worker.child.pid!)).toEqual([])
      expect(api.output()).not.toContain("svc metrics listening")
      expect(worker.output()).not.toContain("svc metrics listening")
    } finally {
      await stopAll(started)
      await dropDatabase(url)
    }
  }, 60_000)
})

describe("svc start (all-in-one)", () => {
  it("serves one endpoint with the API's and the worker's metrics", async () => {
    const url = await createDatabase()
    const [port, metricsPort] = [await freePort(), await freePort()]
    const start = svc("start", {
      DATABASE_URL: url,
      SVC_DATA_DIR: path.join(scratch, "start"),
      SVC_PORT: String(port),
      SVC_METRICS_PORT: String(metricsPort),
      SVC_AUTH_SECRET: AUTH_SECRET
    })
    try {
      await start.waitFor(/svc is ready/, 90_000)
      expect(listeningPorts(start.child.pid!)).toEqual([port, metricsPort].sort((a, b) => a - b))
      expect((await call(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
      const scraped = await scrapeUntil(
        `http://127.0.0.1:${metricsPort}/metrics`,
        (s) => family(s, "svc_work_items") !== undefined,
        "the worker's queue sample"
      )
      expect(value(scraped, REQUESTS, { method: "GET", route: "/readyz", status: "200" })).toBe(1)
      // Every registered kind is reported, queued and running, from the first sample on.
      expect(samples(scraped, "svc_work_items", { kind: "namespace.provision" }).map((s) => s.labels?.state).sort())
        .toEqual(["queued", "running"])
    } finally {
      expect((await start.stop("SIGINT")).code).toBe(0)
      await dropDatabase(url)
    }
  }, 120_000)
})

describe("SVC_METRICS_PORT validation", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["api", "abc"],
    ["worker", "70000"],
    ["start", "-1"]
  ]
  for (const [command, port] of cases) {
    it(`svc ${command} with SVC_METRICS_PORT=${port} exits 78 naming the variable and the rule`, async () => {
      const child = svc(command, {
        SVC_DATA_DIR: path.join(scratch, "bad-port"),
        DATABASE_URL: "postgres://u:p@127.0.0.1:1/db",
        SVC_METRICS_PORT: port
      })
      expect((await child.exited).code).toBe(78)
      expect(child.output()).toContain(`SVC_METRICS_PORT: expected an integer between 0 and 65535, got "${port}"`)
      expect(child.output()).not.toContain("u:p@")
    }, 30_000)
  }
})

describe("a metrics port already in use", () => {
  it("stops svc worker at start with the variable named", async () => {
    const url = await createDatabase()
    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as net.AddressInfo).port
    try {
      const env = { DATABASE_URL: url, SVC_DATA_DIR: path.join(scratch, "taken") }
      expect((await svc("migrate", env).exited).code).toBe(0)
      const worker = svc("worker", { ...env, SVC_METRICS_PORT: String(port) })
      const exit = await worker.exited
      expect(exit.code).toBe(1)
      expect(worker.output()).toContain(`SVC_METRICS_PORT: cannot listen on 127.0.0.1:${port} (listen EADDRINUSE`)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
      await dropDatabase(url)
    }
  }, 60_000)
})
