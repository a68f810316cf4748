import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { Effect, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import pg from "pg"
import fs from "node:fs"
const dir = scratchDir("svc-micro-pg-")
const server = await startEmbeddedPostgres({ dir, ephemeral: true })
const url = server.adminUrl
const pool = new pg.Pool({ connectionString: url, max: 2 })
const rt = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url), maxConnections: 10 }))
const N = 3000
const time = async (name, f) => {
  await f(200)
  const t0 = process.cpuUsage(); const w0 = performance.now()
  await f(N)
  const u = process.cpuUsage(t0)
  console.log(name.padEnd(30), ((u.user + u.system) / N).toFixed(0), "us cpu/op", ((performance.now()-w0)*1000/N).toFixed(0), "us wall/op")
}
const big = `SELECT now() AS a, now() AS b, now() AS c, now() AS d, 'x'::text AS id, 'k'::text AS kind, 'key'::text AS key, '{}'::jsonb AS payload, 1 AS attempt_count -- ${"x".repeat(1000)}`
for (const r of [1,2]) {
await time("effect sql SELECT 1", (n) => rt.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(Array.from({length:n}), () => sql`SELECT 1`, {discard:true}))))
await time("effect sql big row", (n) => rt.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(Array.from({length:n}), () => sql.unsafe(big), {discard:true}))))

await time("raw pool SELECT 1", async (n) => { for (let i=0;i<n;i++) await pool.query("SELECT 1") })
await time("raw pool big row", async (n) => { for (let i=0;i<n;i++) await pool.query(big) })
await time("raw pool big row prepared", async (n) => { for (let i=0;i<n;i++) await pool.query({name: "big", text: big}) })
}
await pool.end(); await rt.dispose(); await server.stop(); fs.rmSync(dir, { recursive: true, force: true })
