// The listing part of bench-agents.mjs: its page client (a child process), the statement
// counter on the server's pg client, and the timed passes over a whole list.
import * as childProcess from "node:child_process"
import * as path from "node:path"
import pg from "pg"
import { startProfile } from "./bench.mjs"

export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length

/**
 * Pages read raw by a client in another process (bench-page-client.mjs): the timed span is the
 * server's answer alone, without the client's work (request, body parsing) in the server's
 * process. `read` resolves to the page's data and the child's latency.
 */
export const pageClient = (baseUrl, key) => {
  const child = childProcess.fork(path.join(import.meta.dirname, "bench-page-client.mjs"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const read = (p) =>
    new Promise((resolve) => {
      child.once("message", resolve)
      child.send({ url: `${baseUrl}${p}`, headers: { "x-api-key": key } })
    }).then(({ ms, status, ids, error }) => {
      if (status !== 200) throw new Error(`GET ${p}: ${status} ${JSON.stringify(error)}`)
      return { ids, ms }
    })
  return { read, close: () => child.disconnect() }
}

/**
 * Counts every statement this process's pg clients send (`pg.Client.prototype.query` wrapped)
 * until `restore`; BENCH_TRACE=1 prints each distinct statement's text once.
 */
export const countStatements = (log) => {
  const counter = { statements: 0 }
  const query = pg.Client.prototype.query
  const traced = new Set()
  pg.Client.prototype.query = function (...args) {
    counter.statements++
    const text = typeof args[0] === "string" ? args[0] : args[0]?.text
    if (process.env.BENCH_TRACE === "1" && text && !traced.has(text)) {
      traced.add(text)
      log(`statement: ${text.replace(/\s+/g, " ").slice(0, 200)}`)
    }
    return query.apply(this, args)
  }
  return { counter, restore: () => { pg.Client.prototype.query = query } }
}

/**
 * A whole list read page by page with `page(after)` (resolving to `{ ids, ms }`): one untimed
 * warm-up pass (JIT, plans, pool, so the first page size is not timed while the server's code
 * compiles), then `passes` timed passes (BENCH_PROFILE=<file> profiles them when `profiled`).
 * Per page: the latency, the statements counted meanwhile, and this process's CPU, the server's
 * own work (or the bare query's client side), which waiting on a loaded machine does not inflate.
 */
export const timePages = async ({ page, size, expected, passes, counter, profiled }) => {
  for (let after, ids; ids === undefined || ids.length === size; after = ids[ids.length - 1]) ({ ids } = await page(after))
  const stopProfile = await startProfile(profiled ? process.env.BENCH_PROFILE : undefined)
  const measured = measure(counter)
  let total = 0
  for (let pass = 0; pass < passes; pass++) {
    let after
    for (;;) {
      const { ids } = await measured.time(() => page(after))
      total += ids.length
      if (ids.length < size) break
      after = ids[ids.length - 1]
    }
  }
  await stopProfile()
  if (total !== expected * passes) throw new Error(`listed ${total} rows, expected ${expected * passes}`)
  return measured.summary()
}

/**
 * `count` single requests timed as pages are (after a warm-up of as many): the request path's
 * fixed cost beside the lists (GET /installation: the credential statement and nothing else).
 */
export const timeRequests = async ({ request, count, counter }) => {
  for (let i = 0; i < count; i++) await request()
  const measured = measure(counter)
  for (let i = 0; i < count; i++) await measured.time(request)
  return measured.summary()
}

/** Per exchange: the latency, the statements counted meanwhile, and this process's CPU. */
const measure = (counter) => {
  const latencies = []
  const counts = []
  const cpu = []
  const time = async (exchange) => {
    const before = counter.statements
    const cpuBefore = process.cpuUsage()
    const answer = await exchange()
    const used = process.cpuUsage(cpuBefore)
    cpu.push((used.user + used.system) / 1000)
    latencies.push(answer.ms)
    counts.push(counter.statements - before)
    return answer
  }
  return { time, summary: () => summarize(latencies, counts, cpu) }
}

const summarize = (latencies, counts, cpu) => {
  latencies.sort((a, b) => a - b)
  cpu.sort((a, b) => a - b)
  return {
    pages: latencies.length,
    statements: mean(counts),
    maxStatements: Math.max(...counts),
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    cpu50: percentile(cpu, 0.5)
  }
}
