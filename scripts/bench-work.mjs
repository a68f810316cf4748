#!/usr/bin/env node
// Work engine benchmark: our engine (@svc/worker) against graphile-worker on the same PostgreSQL.
//
//   npm run bench:work                    (builds, then runs this script)
//
// For each system and each worker concurrency (1 and 4 fibers):
//   - throughput: BENCH_ITEMS no-op items are enqueued first (not timed), then the workers start;
//     items/s is measured from the first to the last handler invocation.
//   - claim latency: with the workers running and idle, BENCH_LATENCY_ITEMS items are enqueued one
//     at a time, BENCH_LATENCY_GAP_MS apart; latency is database time from the item being due
//     (our next_attempt_at, graphile's run_at) to its claim (our claim's now(), graphile's locked_at),
//     to the microsecond: both systems' timestamps keep the digits a JavaScript Date drops (`dbMillis`).
//     Measured on idle workers, it is the wake-up path (LISTEN/NOTIFY), not time spent queued.
//
// Environment: BENCH_DATABASE_URL (an admin URL of an existing server; default: an embedded
// PostgreSQL in a scratch directory), BENCH_ITEMS (5000), BENCH_LATENCY_ITEMS (1000),
// BENCH_LATENCY_GAP_MS (10), BENCH_PHASE_TIMEOUT_S (180), BENCH_FIBERS (the concurrencies to run,
// comma-separated: "1,4"). The script stops by itself: every phase
// has a timeout, and the whole run is bounded.
import { SqlClient } from "@effect/sql"
import { Migrations, pgPoolLayer } from "@svc/core/db"
import { scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { enqueue, WorkEngine, WorkHandler, WorkHandlers } from "@svc/worker"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Schema } from "effect"
import { Logger as GraphileLogger, makeWorkerUtils, run as runGraphile, runMigrations } from "graphile-worker"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import pg from "pg"
import { admin, int, serverCpu, startProfile, urlFor } from "./lib/bench.mjs"

const ITEMS = int("BENCH_ITEMS", 5000)
const LATENCY_ITEMS = int("BENCH_LATENCY_ITEMS", 1000)
const LATENCY_GAP_MS = int("BENCH_LATENCY_GAP_MS", 10)
const PHASE_TIMEOUT_MS = int("BENCH_PHASE_TIMEOUT_S", 180) * 1000
const CONCURRENCIES = (process.env.BENCH_FIBERS ?? "1,4").split(",").map((n) => {
  const fibers = Number(n)
  if (!Number.isInteger(fibers) || fibers < 1) throw new Error(`BENCH_FIBERS: not a number of fibers: ${n}`)
  return fibers
})
const KIND = "bench.noop"

// Whole-run bound: 2 systems x 2 concurrencies x 2 phases, plus set-up.
const hardStop = setTimeout(
  () => {
    console.error("bench-work: exceeded its time bound; exiting")
    process.exit(2)
  },
  PHASE_TIMEOUT_MS * 9 + 120_000
)
hardStop.unref()

/** Every statement any pg client of this process sends. */
const statements = { count: 0 }
const pgQuery = pg.Client.prototype.query
pg.Client.prototype.query = function (...args) {
  statements.count++
  return pgQuery.apply(this, args)
}

// Both systems read timestamps through this process's `pg`; a Date holds milliseconds only, so each
// parsed timestamptz also keeps its sub-millisecond digits, and latencies are exact to the
// microsecond instead of rounded to whole milliseconds (where both systems' p50s tied).
const TIMESTAMPTZ = 1184
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ)
pg.types.setTypeParser(TIMESTAMPTZ, (text) => {
  const date = parseTimestamptz(text)
  const fraction = /\.(\d+)/.exec(text)
  if (date instanceof Date) date.microsOfMilli = fraction === null ? 0 : Number(fraction[1].padEnd(6, "0").slice(3, 6))
  return date
})
/** A timestamp read by `pg`, in milliseconds with its microseconds. */
const dbMillis = (date) => date.getTime() + (date.microsOfMilli ?? 0) / 1000

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const withTimeout = (promise, ms, what) => {
  let timer
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

/** Counts handler invocations, their wall-clock span and claim latencies. */
class Recorder {
  constructor(expected) {
    this.expected = expected
    this.latencies = []
    this.first = 0
    this.last = 0
    this.done = new Promise((resolve) => (this.resolve = resolve))
  }
  record(latencyMs) {
    const now = performance.now()
    if (this.latencies.length === 0) this.first = now
    this.last = now
    this.latencies.push(latencyMs)
    if (this.latencies.length === this.expected) this.resolve()
  }
  rate() {
    const seconds = (this.last - this.first) / 1000
    return seconds > 0 ? (this.latencies.length - 1) / seconds : Number.NaN
  }
  percentile(q) {
    const sorted = [...this.latencies].sort((a, b) => a - b)
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
  }
}

/** The recorder handlers report to; each phase installs its own. */
let current = new Recorder(0)


// ---------------------------------------------------------------------------------------------
// Our engine

const pgLayer = (url) => pgPoolLayer({ url: Redacted.make(url), maxConnections: 10 })
const quiet = Logger.minimumLogLevel(LogLevel.Warning)

const NoopHandler = WorkHandler.layer(KIND, Schema.Unknown, (_payload, ctx) =>
  Effect.sync(() => current.record(dbMillis(ctx.claimedAt) - dbMillis(ctx.scheduledAt)))
)

const ours = {
  name: "svc work engine",
  async setup(url) {
    this.client = ManagedRuntime.make(Layer.merge(pgLayer(url), quiet))
    await this.client.runPromise(Migrations.run)
  },
  async reset() {
    await this.client.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`TRUNCATE work_items`)
    )
  },
  async fill(count) {
    let next = 0
    while (next < count) {
      const batch = Array.from({ length: Math.min(500, count - next) }, (_, i) => next + i)
      next += batch.length
      await this.client.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.withTransaction(Effect.forEach(batch, (i) => enqueue({ kind: KIND, key: `t-${i}` }), { discard: true }))
        )
      )
    }
  },
  async addOne(i) {
    await this.client.runPromise(enqueue({ kind: KIND, key: `l-${i}` }))
  },
  async start(url, concurrency) {
    const layer = WorkEngine.layer({
      concurrency,
      pollInterval: "2 seconds",
      leaseDuration: "30 seconds"
    }).pipe(
      Layer.provide(NoopHandler),
      Layer.provide(WorkHandlers.layer),
      Layer.provide(pgLayer(url)),
      Layer.provide(quiet)
    )
    const runtime = ManagedRuntime.make(layer)
    await runtime.runtime()
    return () => runtime.dispose()
  },
  async remaining() {
    const rows = await this.client.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`SELECT count(*)::int AS n FROM work_items WHERE state <> 'succeeded'`
      )
    )
    return rows[0].n
  },
  async teardown() {
    await this.client.dispose()
  }
}

// ---------------------------------------------------------------------------------------------
// graphile-worker

const silent = new GraphileLogger(() => () => {})

const graphile = {
  name: "graphile-worker",
  async setup(url) {
    this.url = url
    await runMigrations({ connectionString: url, logger: silent })
    this.utils = await makeWorkerUtils({ connectionString: url, logger: silent })
    this.pool = new pg.Pool({ connectionString: url, max: 2 })
  },
  async reset() {
    await this.pool.query("DELETE FROM graphile_worker._private_jobs")
  },
  async fill(count) {
    await this.pool.query("SELECT graphile_worker.add_job($1, '{}'::json) FROM generate_series(1, $2)", [KIND, count])
  },
  async addOne() {
    await this.utils.addJob(KIND, {})
  },
  async start(url, concurrency) {
    const runner = await runGraphile({
      connectionString: url,
      concurrency,
      pollInterval: 2000,
      noHandleSignals: true,
      logger: silent,
      taskList: {
        [KIND]: async (_payload, helpers) => {
          current.record(dbMillis(helpers.job.locked_at) - dbMillis(helpers.job.run_at))
        }
      }
    })
    return () => runner.stop()
  },
  async remaining() {
    const result = await this.pool.query("SELECT count(*)::int AS n FROM graphile_worker._private_jobs")
    return result.rows[0].n
  },
  async teardown() {
    await this.utils.release()
    await this.pool.end()
  }
}

// ---------------------------------------------------------------------------------------------

const vacuum = (url) => admin(url, (client) => client.query("VACUUM ANALYZE"))

/** PostgreSQL's CPU so far (µs), when the server runs on this machine; set in main. */
let postgresCpu = () => null

const measure = async (system, url, concurrency) => {
  // Throughput: a backlog drained from a cold start.
  await system.reset()
  await system.fill(ITEMS)
  await vacuum(url)
  current = new Recorder(ITEMS)
  const cpu0 = process.cpuUsage()
  const pgCpu0 = postgresCpu()
  // BENCH_PROFILE=<file>: CPU-profile our engine's 1-fiber drain (start-up included).
  const stopProfile = await startProfile(system.name === (process.env.BENCH_PROFILE_SYSTEM ?? ours.name) && concurrency === 1 ? process.env.BENCH_PROFILE : undefined)
  // Statements both systems send while draining (both use this process's `pg`).
  const statementsBefore = statements.count
  const stop = await system.start(url, concurrency)
  try {
    await withTimeout(current.done, PHASE_TIMEOUT_MS, `${system.name} x${concurrency} throughput`)
    await stopProfile()
    const perItem = (statements.count - statementsBefore) / ITEMS
    const rate = current.rate()
    const used = process.cpuUsage(cpu0)
    // This process's CPU (user + system) per item while draining: the cost of the worker itself.
    const cpu = (used.user + used.system) / ITEMS
    const cpuUser = used.user / ITEMS
    const pgCpu1 = postgresCpu()
    // The server's CPU per item over the same drain (its backends, WAL writer and checkpointer).
    const pgCpu = pgCpu0 === null || pgCpu1 === null ? Number.NaN : (pgCpu1 - pgCpu0) / ITEMS

    // Latency: single items on idle workers.
    await sleep(500)
    current = new Recorder(LATENCY_ITEMS)
    for (let i = 0; i < LATENCY_ITEMS; i++) {
      await system.addOne(i)
      await sleep(LATENCY_GAP_MS)
    }
    await withTimeout(current.done, PHASE_TIMEOUT_MS, `${system.name} x${concurrency} latency`)
    const result = { rate, cpu, cpuUser, pgCpu, perItem, p50: current.percentile(0.5), p99: current.percentile(0.99) }
    await sleep(200)
    return result
  } finally {
    await withTimeout(Promise.resolve(stop()), 30_000, `${system.name} shutdown`)
    const left = await system.remaining()
    if (left !== 0) console.error(`bench-work: ${system.name} left ${left} items unfinished`)
  }
}

const fmt = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")

const main = async () => {
  let server
  let dir
  let adminUrl = process.env.BENCH_DATABASE_URL
  if (!adminUrl) {
    dir = scratchDir("svc-bench-pg-")
    server = await startEmbeddedPostgres({ dir, ephemeral: true })
    adminUrl = server.adminUrl
  }
  const suffix = crypto.randomBytes(4).toString("hex")
  const databases = { ours: `svc_bench_ours_${suffix}`, graphile: `svc_bench_graphile_${suffix}` }
  await admin(adminUrl, async (client) => {
    for (const name of Object.values(databases)) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`)
  })
  const version = await admin(adminUrl, (client) => client.query("SHOW server_version"))
  postgresCpu = await serverCpu(adminUrl)
  const urls = { ours: urlFor(adminUrl, databases.ours), graphile: urlFor(adminUrl, databases.graphile) }
  const results = []
  try {
    await ours.setup(urls.ours)
    await graphile.setup(urls.graphile)
    for (const concurrency of CONCURRENCIES) {
      for (const [key, system] of [["ours", ours], ["graphile", graphile]]) {
        process.stderr.write(`bench-work: ${system.name}, ${concurrency} worker(s)...\n`)
        results.push({ key, concurrency, ...(await measure(system, urls[key], concurrency)) })
      }
    }
  } finally {
    await ours.teardown().catch(() => {})
    await graphile.teardown().catch(() => {})
    await admin(adminUrl, async (client) => {
      for (const name of Object.values(databases)) {
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`)
      }
    }).catch(() => {})
    if (server) await server.stop()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  }

  const lines = [
    `PostgreSQL ${version.rows[0].server_version}, Node ${process.version}; throughput: ${ITEMS} no-op items; ` +
      `claim latency: ${LATENCY_ITEMS} items ${LATENCY_GAP_MS} ms apart on idle workers`,
    "",
    "| fibers | ours items/s | graphile items/s | ratio | ours claim p50 / p99 ms | graphile claim p50 / p99 ms | ratio p50 / p99 | worker CPU µs/item (user) ours / graphile | CPU ratio | PostgreSQL CPU µs/item ours / graphile | statements/item ours / graphile |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const concurrency of CONCURRENCIES) {
    const a = results.find((r) => r.key === "ours" && r.concurrency === concurrency)
    const b = results.find((r) => r.key === "graphile" && r.concurrency === concurrency)
    lines.push(
      `| ${concurrency} | ${fmt(a.rate, 0)} | ${fmt(b.rate, 0)} | ${fmt(a.rate / b.rate, 2)} | ` +
        `${fmt(a.p50, 2)} / ${fmt(a.p99, 2)} | ${fmt(b.p50, 2)} / ${fmt(b.p99, 2)} | ` +
        `${fmt(a.p50 / b.p50, 2)} / ${fmt(a.p99 / b.p99, 2)} | ${fmt(a.cpu, 0)} (${fmt(a.cpuUser, 0)}) / ${fmt(b.cpu, 0)} (${fmt(b.cpuUser, 0)}) | ${fmt(a.cpu / b.cpu, 2)} | ` +
        `${fmt(a.pgCpu, 0)} / ${fmt(b.pgCpu, 0)} | ${fmt(a.perItem, 2)} / ${fmt(b.perItem, 2)} |`
    )
  }
  console.log(lines.join("\n"))
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error("bench-work failed:", error)
    process.exit(1)
  }
)
