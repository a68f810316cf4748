#!/usr/bin/env node
// Self time of a .cpuprofile (bench-auth BENCH_PROFILE) by area: idle, socket writes, GC, logging,
// tracing, schema, metrics, the Effect runtime, platform, sql, pg, our code, node core.
//
//   node scripts/profile-areas.mjs FILE.cpuprofile [REQUESTS]
//
// With REQUESTS (the requests served while profiling), also sampled µs per request: sampled wall
// time, so it includes time the thread was descheduled (writev above all on a shared machine).
import fs from "node:fs"
const [file, requests] = process.argv.slice(2)
const p = JSON.parse(fs.readFileSync(file, "utf8"))
const byId = new Map(p.nodes.map((x) => [x.id, x]))
const areas = [
  ["idle", (f, u) => f === "(idle)"],
  ["socket writes (writev, native)", (f) => f === "writev" || f === "writeBuffer" || f === "writeUtf8String"],
  ["garbage collector", (f) => f === "(garbage collector)"],
  ["logging + scrubbing (our logger, effect Logger)", (f, u) => /observability\/(logger|scrub)|effect\/dist\/esm\/internal\/logger|Logger\.js/.test(u)],
  ["tracing (effect tracer, spans)", (f, u) => /effect\/dist\/esm\/internal\/tracer\.js/.test(u) || f === "addSpanStackTrace" || f === "unsafeMakeSpan"],
  ["schema (ParseResult, Schema, SchemaAST)", (f, u) => /effect\/dist\/esm\/(ParseResult|Schema|SchemaAST)\.js/.test(u)],
  ["metrics (effect metric)", (f, u) => /effect\/dist\/esm\/internal\/metric/.test(u)],
  ["Effect runtime (fibers, context, fiberRefs, core, Hash/Equal)", (f, u) => /node_modules\/effect\//.test(u)],
  ["@effect/platform + platform-node", (f, u) => /@effect\/platform/.test(u)],
  ["@effect/sql + sql-pg", (f, u) => /@effect\/sql/.test(u)],
  ["pg driver (pg, pg-protocol, pg-pool)", (f, u) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//.test(u)],
  ["our code (packages/*)", (f, u) => /\/packages\//.test(u)],
  ["node core (http, streams, events, ticks)", (f, u) => /^node:/.test(u)],
  ["other (native, autocannon, program)", () => true]
]
const totals = new Map(areas.map(([n]) => [n, 0]))
let total = 0
p.samples.forEach((id, i) => {
  const d = p.timeDeltas[i] ?? 0; total += d
  const cf = byId.get(id).callFrame
  for (const [name, test] of areas) if (test(cf.functionName, cf.url)) { totals.set(name, totals.get(name) + d); break }
})
const busy = total - totals.get("idle")
console.log(`| area | share of samples | µs per request (of ${requests} requests) |`)
console.log("|---|---:|---:|")
for (const [name, v] of totals) console.log(`| ${name} | ${(100 * v / total).toFixed(1)}% | ${requests ? Math.round(v / requests) : ""} |`)
console.log(`| busy (all but idle) | ${(100 * busy / total).toFixed(1)}% | ${requests ? Math.round(busy / requests) : ""} |`)
