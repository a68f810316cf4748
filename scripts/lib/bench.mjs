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

/**
 * A statement for `pool.query(statement)`, built from its text the way the service builds its
 * named statements (packages/core/src/db/namedStatement.ts): `pg` copies a `{ name, text, values }`
 * config object through property descriptors on every call (6-14 µs here), so a floor sending
 * config objects would pay a cost the service no longer pays. Unnamed without `name`.
 */
export const statement = (text, values, name) => Object.assign(new pg.Query(text, values), { name })

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

/**
 * The server's CPU (user + system, µs) so far, when it runs on this machine: the postmaster's own,
 * its exited children's (reaped backends), and its live children's, from /proc. Resolves to a
 * function returning null where /proc or the server's processes cannot be read (a remote server).
 */
export const serverCpu = async (adminUrl) => {
  const fs = await import("node:fs")
  const ticks = 1_000_000 / 100 // µs per clock tick (USER_HZ is 100 on Linux)
  const stat = (pid) => {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces), numbered from 3.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]), cutime: Number(fields[13]), cstime: Number(fields[14]) }
  }
  let postmaster
  try {
    // Read while the backend is alive: its parent is the postmaster.
    postmaster = await admin(adminUrl, async (client) => stat((await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid).ppid)
    stat(postmaster)
  } catch {
    return () => null
  }
  return () => {
    try {
      const self = stat(postmaster)
      let total = self.utime + self.stime + self.cutime + self.cstime
      for (const entry of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(entry)) continue
        try {
          const child = stat(entry)
          if (child.ppid === postmaster) total += child.utime + child.stime
        } catch {
          // The process ended meanwhile: its time is in the postmaster's cutime now.
        }
      }
      return total * ticks
    } catch {
      return null
    }
  }
}
