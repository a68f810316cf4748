// What the benchmark scripts share: bounded integer settings and scratch databases on a server.
import pg from "pg"

/** A positive integer from the environment, or the fallback. */
export const int = (name, fallback) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number.parseInt(raw, 10)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`)
  return value
}

/** Runs `f` with a client on the server's maintenance database. */
export const admin = async (adminUrl, f) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** The URL of another database on the same server. */
export const urlFor = (adminUrl, database) => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/**
 * CPU-profiles this process through `node:inspector` from now until the returned `stop`, which
 * writes the `.cpuprofile` to `file`; without a file, does nothing (BENCH_PROFILE unset).
 * BENCH_PROFILE_INTERVAL_US sets the sampling interval.
 */
export const startProfile = async (file) => {
  if (!file) return async () => {}
  const inspector = await import("node:inspector/promises")
  const fs = await import("node:fs")
  const session = new inspector.Session()
  session.connect()
  await session.post("Profiler.enable")
  // BENCH_PROFILE_INTERVAL_US: a finer sampling interval than V8's default (1000 µs).
  const interval = process.env.BENCH_PROFILE_INTERVAL_US
  if (interval) await session.post("Profiler.setSamplingInterval", { interval: int("BENCH_PROFILE_INTERVAL_US", 1000) })
  await session.post("Profiler.start")
  return async () => {
    const { profile } = await session.post("Profiler.stop")
    fs.writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}
