#!/usr/bin/env node
// Authentication and authorization benchmark (loopback only, bounded in time).
//
//   npm run bench:auth                    (builds, then runs this script)
//
// 1. An authenticated GET /installation (authenticate, decide installation:read, read the
//    Installation row) through the full stack: the real HttpApi pipeline, every group of SvcApi,
//    the Authentication middleware and authorize(), on PostgreSQL; once with a service key
//    (x-api-key), once with a session cookie. Measured with autocannon: requests/s, p50, p99.
// 2. The same request served by a bare node:http + pg handler doing the same lookups (the digest
//    lookup of the credential, the decision query, the Installation row) with the same pool size:
//    the floor our stack is compared with.
// 2b. The keyed GET again while a child process floods sign-ins (random emails, so the
//    throttle admits them and each costs an argon2 check; BENCH_FLOOD concurrent, default 100,
//    0 skips this run;
//    a client refused with 503 waits its Retry-After, as a browser or CLI is told to):
//    its p99 beside the p99 without the flood (issue 10 §3: hashing is bounded by a gate).
// 3. The cost of one `decide` call with 10, 1 000 and 100 000 AccessBindings in the database
//    (bindings of other principals; the caller has one): mean, p50 and p99 per call.
//
// Environment: BENCH_DATABASE_URL (an admin URL of an existing server; default: an embedded
// PostgreSQL in a scratch directory), BENCH_DURATION_S (8 per HTTP run), BENCH_CONNECTIONS (10),
// BENCH_WARMUP_S (2: unmeasured load per credential before a server's measured runs; 0 skips),
// BENCH_DECISIONS (2000 per size), BENCH_LOG (`info`: the production logger, JSON lines at Info
// with scrubbing, written to /dev/null or to BENCH_LOG_FILE; default none: silent), BENCH_PROFILE (a path: the full-stack runs are CPU-profiled
// in this process and the .cpuprofile written there; autocannon shares the process, so its
// frames appear too), BENCH_COUNT_OPS (1: also count the effect instructions, fiber-ref writes,
// spans, fibers and stack captures per full-stack request). The whole run stops itself after a bound.
import { NodeHttpServer } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { Migrations, pgPoolLayer } from "@svc/core/db"
import { freePort, scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { httpPipeline } from "@svc/core/http"
import { BuiltinRoles, decide, digestOf, Installation, newOpaqueId, newToken } from "@svc/core/iam"
import { jsonLineLogger } from "@svc/core/observability"
import autocannon from "autocannon"
import { layerLocal } from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as inspector from "node:inspector/promises"
import { PerformanceObserver } from "node:perf_hooks"
import pg from "pg"
import { admin, int, urlFor } from "./lib/bench.mjs"
import { countOps } from "./lib/effectOps.mjs"
import { startFlood } from "./lib/signInFlood.mjs"
import { bareServer } from "./lib/bareAuthServer.mjs"

const DURATION_S = int("BENCH_DURATION_S", 8)
const FLOOR = "bare node:http + pg"
const NAMED_FLOOR = "bare, named statements"
// Unmeasured load before each server's first measured run, so neither side is measured while
// its JIT warms up (the first run used to be the full stack's service key, always the slowest).
const WARMUP_S = process.env.BENCH_WARMUP_S === "0" ? 0 : int("BENCH_WARMUP_S", 2)
const CONNECTIONS = int("BENCH_CONNECTIONS", 10)
const DECISIONS = int("BENCH_DECISIONS", 2000)
// 0 skips the sign-in flood run (the request path alone, e.g. while profiling).
const FLOOD = process.env.BENCH_FLOOD === "0" ? 0 : int("BENCH_FLOOD", 100)
const POOL = 10
const PROFILE = process.env.BENCH_PROFILE
const LOG = process.env.BENCH_LOG === "info" ? "info" : "none"
// Effect instructions per request (a deterministic measure of the full stack's work, unlike
// timings on a shared machine): 500 sequential requests per credential after the warm-up.
const COUNT_OPS = process.env.BENCH_COUNT_OPS === "1"
const BINDING_COUNTS = [10, 1_000, 100_000]
const BASE_URL = "http://127.0.0.1:8080"

const hardStop = setTimeout(() => {
  console.error("bench-auth: exceeded its time bound; exiting")
  process.exit(2)
}, (DURATION_S * 4 + 600) * 1000)
hardStop.unref()


const uuid = () => crypto.randomUUID()

/** An Installation administrator (human with a session) and an administrator service key. */
const seed = async (pool) => {
  const human = `prn_${uuid()}`
  const account = `usr_${uuid()}`
  const sp = `sp_${uuid()}`
  const session = newToken("svcs")
  const key = newToken("svck")
  await pool.query("INSERT INTO principals (id, kind, name) VALUES ($1, 'human', 'bench admin'), ($2, 'service', 'bench key')", [human, sp])
  await pool.query("INSERT INTO accounts (id, principal_id, email, name, enrolled_at) VALUES ($1, $2, 'bench@example.com', 'bench', now())", [account, human])
  await pool.query(
    "INSERT INTO sessions (id, token_digest, session_key, account_id, expires_at) VALUES ($1, $2, $3, $4, now() + interval '1 day')",
    [`ses_${uuid()}`, digestOf(session), newOpaqueId(), account]
  )
  await pool.query(
    "INSERT INTO service_keys (id, service_principal_id, name, digest, expires_at) VALUES ($1, $2, 'bench', $3, now() + interval '1 day')",
    [`key_${uuid()}`, sp, digestOf(key)]
  )
  for (const principal of [human, sp]) {
    await pool.query(
      "INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id) VALUES ($1, $2, $3, 'installation', 'installation')",
      [`bnd_${uuid()}`, principal, BuiltinRoles.installationAdmin.id]
    )
  }
  await pool.query("INSERT INTO installation (id, bootstrapped_at) VALUES ($1, now())", [`inst_${uuid()}`])
  return { principal: sp, session, key }
}

/** Adds bindings of other principals until the table holds `total` rows. */
const growBindings = async (pool, total) => {
  const { rows } = await pool.query("SELECT count(*)::int AS n FROM access_bindings")
  const missing = total - rows[0].n
  if (missing <= 0) return
  await pool.query(
    `WITH p AS (
       INSERT INTO principals (id, kind, name)
       SELECT 'sp_' || gen_random_uuid(), 'service', 'filler' FROM generate_series(1, $1)
       RETURNING id
     )
     INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id)
     SELECT 'bnd_' || gen_random_uuid(), p.id, $2, 'installation', 'installation' FROM p`,
    [missing, BuiltinRoles.namespaceViewer.id]
  )
  await pool.query("ANALYZE access_bindings; ANALYZE principals; ANALYZE roles")
}

/** The full stack: our pipeline, every group, authentication and authorization, on the process pool (pgPoolLayer, as databaseLayer). */
const fullStack = async (url, port) => {
  const computeDir = scratchDir("svc-bench-auth-compute-")
  const database = pgPoolLayer({ url: Redacted.make(url), maxConnections: POOL })
  const app = httpPipeline(SvcApi, ApiGroupsLive, { development: false, maxBodyBytes: 448 * 1024 }).pipe(
    Layer.provide(NodeHttpServer.layer(http.createServer, { host: "127.0.0.1", port })),
    Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl: BASE_URL, production: false }))),
    Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
    // A throwaway key: the bench's database is dropped after the run. No Agent runs: an empty
    // local Compute host.
    Layer.provide(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(crypto.randomBytes(32))) })),
    Layer.provide(layerLocal(computeDir)),
    Layer.provide(database),
    // Quiet by default: autocannon ends runs by closing sockets mid-request, which the server
    // logs (499). Failures still count: any non-2xx or socket error fails the run. With
    // BENCH_LOG=info, the production logger's work (one scrubbed JSON line per request) is paid
    // and its lines written to /dev/null.
    Layer.provide(LOG === "info" ? productionLogger() : Logger.minimumLogLevel(LogLevel.None))
  )
  const runtime = ManagedRuntime.make(app)
  await runtime.runPromise(Effect.void)
  return async () => {
    await runtime.dispose()
    fs.rmSync(computeDir, { recursive: true, force: true })
  }
}

/** The JSON logger at Info, as `svc api` runs by default, writing to /dev/null (or BENCH_LOG_FILE). */
const productionLogger = () => {
  const sink = fs.openSync(process.env.BENCH_LOG_FILE ?? "/dev/null", "w")
  const logger = Logger.map(jsonLineLogger, (line) => fs.writeSync(sink, line + "\n"))
  return Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.Info))
}

const load = (port, headers, duration = DURATION_S) =>
  new Promise((resolve, reject) => {
    autocannon(
      { url: `http://127.0.0.1:${port}/installation`, connections: CONNECTIONS, duration, headers, workers: 1 },
      (error, result) => (error ? reject(error) : resolve(result))
    )
  })

const check = async (port, headers) => {
  const response = await fetch(`http://127.0.0.1:${port}/installation`, { headers })
  if (response.status !== 200) throw new Error(`expected 200 from :${port}, got ${response.status} ${await response.text()}`)
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

const timeDecisions = async (runtime, principal) => {
  const decideOnce = decide({ principalId: principal, namespaceId: null }, "installation:read", Installation)
  // Warm-up (plans, pool).
  await runtime.runPromise(Effect.repeatN(decideOnce, 100))
  const samples = []
  for (let i = 0; i < DECISIONS; i++) {
    const start = process.hrtime.bigint()
    const decision = await runtime.runPromise(decideOnce)
    samples.push(Number(process.hrtime.bigint() - start) / 1000)
    if (decision._tag !== "Allowed") throw new Error("the bench caller should be allowed")
  }
  samples.sort((a, b) => a - b)
  return { mean: samples.reduce((a, b) => a + b, 0) / samples.length, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) }
}

/** Garbage-collection pauses of this process's main thread (the server's; not autocannon's worker), µs. */
const gcTime = () => {
  let total = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) total += entry.duration * 1000
  })
  observer.observe({ entryTypes: ["gc"] })
  return {
    stop: () => {
      for (const entry of observer.takeRecords()) total += entry.duration * 1000
      observer.disconnect()
      return total
    }
  }
}

/** The V8 and Node flags this process runs with (the full stack and the floor alike). */
const nodeFlags = () => {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].filter((flag) => flag.startsWith("--"))
  return flags.length === 0 ? "(no flags)" : `(${flags.join(" ")})`
}

const fmt = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")

const main = async () => {
  let server
  let dir
  let adminUrl = process.env.BENCH_DATABASE_URL
  if (!adminUrl) {
    dir = scratchDir("svc-bench-auth-pg-")
    server = await startEmbeddedPostgres({ dir, ephemeral: true })
    adminUrl = server.adminUrl
  }
  const database = `svc_bench_auth_${crypto.randomBytes(4).toString("hex")}`
  await admin(adminUrl, (client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`))
  const url = urlFor(adminUrl, database)
  const version = await admin(adminUrl, (client) => client.query("SHOW server_version"))
  const sqlRuntime = ManagedRuntime.make(
    Layer.merge(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 }), Logger.minimumLogLevel(LogLevel.Warning))
  )
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  const runs = []
  const operations = []
  const decisions = []
  let flood = {}
  try {
    await sqlRuntime.runPromise(Migrations.run)
    const identity = await seed(pool)
    const credentials = [
      ["service key", { "x-api-key": identity.key }],
      ["session cookie", { cookie: `svc.session_token=${identity.session}` }]
    ]
    // The floor sends its three statements unnamed, as a plain `pg` handler does; the
    // second floor sends them as named prepared statements, as the full stack does since session 10.
    const servers = [
      ["full stack", fullStack],
      [FLOOR, (url, port) => bareServer(url, port, POOL, false)],
      [NAMED_FLOOR, (url, port) => bareServer(url, port, POOL, true)]
    ]
    for (const [name, start] of servers) {
      const port = await freePort()
      const stop = await start(url, port)
      let profiler
      const startProfile = async () => {
        if (!PROFILE || name !== "full stack") return
        profiler = new inspector.Session()
        profiler.connect()
        await profiler.post("Profiler.enable")
        await profiler.post("Profiler.start")
      }
      // The profile covers the two calm runs only, not the warm-up or the sign-in flood.
      const stopProfile = async () => {
        if (!profiler) return
        const { profile } = await profiler.post("Profiler.stop")
        fs.writeFileSync(PROFILE, JSON.stringify(profile))
        profiler.disconnect()
        profiler = undefined
      }
      try {
        if (WARMUP_S > 0) {
          for (const [, headers] of credentials) {
            await check(port, headers)
            await load(port, headers, WARMUP_S)
          }
        }
        if (COUNT_OPS && name === "full stack") {
          for (const [credential, headers] of credentials) operations.push({ credential, ...(await countOps(port, headers)) })
        }
        await startProfile()
        for (const [credential, headers] of credentials) {
          await check(port, headers)
          process.stderr.write(`bench-auth: ${name}, ${credential}, ${DURATION_S} s...\n`)
          const gc = gcTime()
          const cpu = process.cpuUsage()
          const result = await load(port, headers)
          const used = process.cpuUsage(cpu)
          const gcUs = gc.stop()
          if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
          runs.push({
            name, credential, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total,
            cpuPerRequest: (used.user + used.system) / result.requests.total, userPerRequest: used.user / result.requests.total,
            gcPerRequest: gcUs / result.requests.total
          })
        }
        await stopProfile()
        if (name === "full stack" && FLOOD > 0) {
          const [credential, headers] = credentials[0]
          process.stderr.write(`bench-auth: ${name}, ${credential}, ${DURATION_S} s with ${FLOOD} concurrent sign-ins...\n`)
          const stopFlood = startFlood(port, FLOOD)
          await new Promise((done) => setTimeout(done, 1000))
          const result = await load(port, headers)
          flood = await stopFlood()
          if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name} under flood: ${result.non2xx} non-2xx, ${result.errors} errors`)
          runs.push({ name: "full stack + sign-in flood", credential, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total })
        }
      } finally {
        await stopProfile()
        await stop()
      }
    }
    for (const total of BINDING_COUNTS) {
      await growBindings(pool, total)
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM access_bindings")
      process.stderr.write(`bench-auth: decide with ${rows[0].n} bindings...\n`)
      decisions.push({ bindings: rows[0].n, ...(await timeDecisions(sqlRuntime, identity.principal)) })
    }
  } finally {
    await pool.end().catch(() => {})
    await sqlRuntime.dispose().catch(() => {})
    await admin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(database)} WITH (FORCE)`)).catch(() => {})
    if (server) await server.stop()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  }

  const lines = [
    `PostgreSQL ${version.rows[0].server_version}, Node ${process.version} ${nodeFlags()}; GET /installation, ${CONNECTIONS} connections, ` +
      `${DURATION_S} s per run, pool of ${POOL} connections on both sides; loopback; server logs: ${LOG}`,
    "",
    "| server | credential | requests/s | p50 ms | p99 ms | requests | CPU µs/request (user) | GC µs/request |",
    "|---|---|---:|---:|---:|---:|---:|---:|"
  ]
  // CPU per request: this process's user + system time over the run (the server and autocannon's
  // worker thread alike, so the same load-generator share on both sides); steadier than requests/s
  // on a shared machine.
  for (const r of runs) lines.push(`| ${r.name} | ${r.credential} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.total} | ${fmt(r.cpuPerRequest)} (user ${fmt(r.userPerRequest)}) | ${fmt(r.gcPerRequest)} |`)
  for (const [floor, label] of [[FLOOR, "full stack / bare"], [NAMED_FLOOR, "full stack / bare, named"]]) for (const credential of ["service key", "session cookie"]) {
    const ours = runs.find((r) => r.name === "full stack" && r.credential === credential)
    const bare = runs.find((r) => r.name === floor && r.credential === credential)
    lines.push(`| ${label} | ${credential} | ${fmt(ours.rps / bare.rps, 2)} | ${fmt(ours.p50 / bare.p50, 2)} | ${fmt(ours.p99 / bare.p99, 2)} | | ${fmt(ours.cpuPerRequest / bare.cpuPerRequest, 2)} | ${fmt(ours.gcPerRequest / bare.gcPerRequest, 2)} |`)
  }
  // Issue 11, item 1: requests/s >= 1.0x the bare floor's, p99 <= 2x its p99, for both credentials.
  lines.push("")
  for (const [floor, label] of [[FLOOR, "the floor"], [NAMED_FLOOR, "the floor with named statements"]]) for (const credential of ["service key", "session cookie"]) {
    const ours = runs.find((r) => r.name === "full stack" && r.credential === credential)
    const bare = runs.find((r) => r.name === floor && r.credential === credential)
    const met = ours.rps >= bare.rps && ours.p99 <= 2 * bare.p99
    lines.push(
      `goal, ${credential}, against ${label}: requests/s ${fmt(ours.rps / bare.rps, 2)}x (>= 1.0x), ` +
        `p99 ${fmt(ours.p99, 1)} ms = ${fmt(ours.p99 / bare.p99, 2)}x the floor's ${fmt(bare.p99, 1)} ms (<= 2x): ${met ? "met" : "not met"}`
    )
  }
  const calm = runs.find((r) => r.name === "full stack" && r.credential === "service key")
  const flooded = runs.find((r) => r.name === "full stack + sign-in flood")
  if (flooded !== undefined) {
    lines.push(
      "",
      `keyed GET p99 with ${FLOOD} concurrent sign-ins (random emails): ${fmt(flooded.p99, 1)} ms; without: ${fmt(calm.p99, 1)} ms; ` +
        `ratio ${fmt(flooded.p99 / calm.p99, 2)} (p50 ${fmt(flooded.p50, 1)} vs ${fmt(calm.p50, 1)} ms). Sign-in answers during the flood: ${JSON.stringify(flood)}`
    )
  }
  if (operations.length > 0) {
    lines.push("", "Full stack, per request (500 sequential requests):", "", "| credential | effect instructions | fiber-ref writes | spans | fibers | stack captures |", "|---|---:|---:|---:|---:|---:|")
    for (const o of operations) lines.push(`| ${o.credential} | ${fmt(o.instructions, 1)} | ${fmt(o.fiberRefWrites, 1)} | ${fmt(o.spans, 1)} | ${fmt(o.fibers, 1)} | ${fmt(o.stackCaptures, 1)} |`)
  }
  lines.push("", `decide(installation:read) per call, ${DECISIONS} sequential calls after warm-up:`, "", "| bindings in the database | mean µs | p50 µs | p99 µs |", "|---:|---:|---:|---:|")
  for (const d of decisions) lines.push(`| ${d.bindings} | ${fmt(d.mean)} | ${fmt(d.p50)} | ${fmt(d.p99)} |`)
  console.log(lines.join("\n"))
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error("bench-auth failed:", error)
    process.exit(1)
  }
)
