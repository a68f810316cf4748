/**
 * The embedded PostgreSQL of `npm start` must survive an unclean shutdown: a SIGKILL leaves
 * `postmaster.pid` behind, and after a while its pid may belong to an unrelated process.
 */
import { describe, expect, it } from "@effect/vitest"
import { EmbeddedPostgresError, inspectStaleLock, scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { startZombie } from "../../../testing/zombie.js"

const selectOne = async (url: string): Promise<number> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query<{ one: number }>("SELECT 1 AS one")
    return result.rows[0]!.one
  } finally {
    await client.end()
  }
}

/** Gone entirely: exited and reaped (this process is the server's parent and reaps it). */
const isGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

const waitUntilGone = async (pid: number): Promise<void> => {
  for (let i = 0; i < 200 && !isGone(pid); i++) await new Promise((r) => setTimeout(r, 50))
  expect(isGone(pid)).toBe(true)
}

const lockPid = (pidFile: string): number => Number.parseInt(fs.readFileSync(pidFile, "utf8").split("\n")[0]!, 10)

/** A live process that is not PostgreSQL, though its command line mentions it (like `psql postgres://...`). */
const startImpostor = (): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "postgres://not-a-server"], {
      stdio: "ignore"
    })
    child.once("error", reject)
    child.once("spawn", () => resolve(child))
  })

/** Writes `pid` into the lock file in place of the crashed postmaster's. */
const recordPid = (pidFile: string, pid: number) => {
  const lines = fs.readFileSync(pidFile, "utf8").split("\n")
  lines[0] = String(pid)
  fs.writeFileSync(pidFile, lines.join("\n"))
}

/** A live process that runs in `cwd`, as an orphaned backend of a crashed server does in its data directory. */
const startIn = (cwd: string, seconds: number): ChildProcess => spawn("sleep", [String(seconds)], { cwd, stdio: "ignore" })

describe("embedded PostgreSQL", () => {
  it("restarts after SIGKILL, also when the stale lock's pid now belongs to a live non-postgres process", async () => {
    const dir = scratchDir("svc-embedded-pg-")
    const dataDir = path.join(dir, "pg")
    const pidFile = path.join(dataDir, "postmaster.pid")
    /** Crash: no shutdown, the lock file stays. */
    const crash = async () => {
      const postmaster = lockPid(pidFile)
      process.kill(postmaster, "SIGKILL")
      await waitUntilGone(postmaster)
      expect(fs.existsSync(pidFile)).toBe(true)
      expect(inspectStaleLock(dataDir)).toEqual({ _tag: "stale", pid: postmaster, reason: "exited" })
    }
    let impostor: ChildProcess | undefined
    let last: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined
    try {
      const first = await startEmbeddedPostgres({ dir })
      expect(await selectOne(first.adminUrl)).toBe(1)
      expect(inspectStaleLock(dataDir)).toEqual({ _tag: "live", pid: lockPid(pidFile) })

      // 1. The recorded process is gone.
      await crash()
      await first.stop() // returns although the server died on its own
      const second = await startEmbeddedPostgres({ dir })
      expect(await selectOne(second.adminUrl)).toBe(1)

      // 2. The recorded pid is reused by an unrelated, live process.
      await crash()
      impostor = await startImpostor()
      recordPid(pidFile, impostor.pid!)
      expect(inspectStaleLock(dataDir)).toEqual({ _tag: "stale", pid: impostor.pid, reason: "reused" })

      last = await startEmbeddedPostgres({ dir })
      expect(await selectOne(last.adminUrl)).toBe(1)
      expect(lockPid(pidFile)).not.toBe(impostor.pid)
      expect(impostor.exitCode).toBeNull() // left alone
    } finally {
      await last?.stop()
      impostor?.kill("SIGKILL")
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("restarts after SIGKILL when the crashed postmaster is a zombie not yet reaped, once no orphaned backend runs in its data directory", async () => {
    const dir = scratchDir("svc-embedded-pg-")
    const dataDir = path.join(dir, "pg")
    const pidFile = path.join(dataDir, "postmaster.pid")
    const zombie = await startZombie()
    const children: Array<ChildProcess> = [zombie.parent]
    let last: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined
    try {
      const first = await startEmbeddedPostgres({ dir })
      const postmaster = lockPid(pidFile)
      process.kill(postmaster, "SIGKILL")
      await waitUntilGone(postmaster)
      await first.stop()
      // PostgreSQL takes a pid that still answers kill(0) for a running postmaster and refuses.
      recordPid(pidFile, zombie.pid)
      expect(inspectStaleLock(dataDir)).toEqual({ _tag: "stale", pid: zombie.pid, reason: "unreaped" })

      // An orphaned backend still runs in the data directory: the lock stays, and the start fails naming it.
      const orphan = startIn(dataDir, 60)
      children.push(orphan)
      const failure = await startEmbeddedPostgres({ dir, orphanWaitMs: 300 }).then(
        () => expect.fail("started while a process of the crashed server still ran in its data directory"),
        (error: unknown) => error
      )
      expect(failure).toBeInstanceOf(EmbeddedPostgresError)
      expect((failure as Error).message).toContain(`processes of a previous PostgreSQL still run in ${dataDir} (pid ${orphan.pid})`)
      expect(lockPid(pidFile)).toBe(zombie.pid)
      orphan.kill("SIGKILL")

      // One that exits while the start waits: the start goes on after it.
      children.push(startIn(dataDir, 1))
      last = await startEmbeddedPostgres({ dir })
      expect(last.notices).toEqual([`removing stale postmaster.pid (pid ${zombie.pid}, unreaped) left by an unclean shutdown`])
      expect(await selectOne(last.adminUrl)).toBe(1)
      expect(inspectStaleLock(dataDir)).toEqual({ _tag: "live", pid: lockPid(pidFile) })
    } finally {
      await last?.stop()
      for (const child of children) child.kill("SIGKILL")
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("refuses to start a second server on a data dir whose server is running", async () => {
    const dir = scratchDir("svc-embedded-pg-")
    const first = await startEmbeddedPostgres({ dir })
    try {
      const failure = await startEmbeddedPostgres({ dir }).then(
        () => expect.fail("a second server started on a live data dir"),
        (error: unknown) => error
      )
      expect(failure).toBeInstanceOf(EmbeddedPostgresError)
      expect((failure as Error).message).toMatch(/is already running \(pid \d+\)/)
      // The running server was left alone.
      expect(await selectOne(first.adminUrl)).toBe(1)
    } finally {
      await first.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
