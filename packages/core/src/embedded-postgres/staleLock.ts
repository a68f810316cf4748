import * as fs from "node:fs"
import * as path from "node:path"

/**
 * What a `postmaster.pid` left in a data directory means.
 * - `absent`: no lock file.
 * - `stale`: no postgres process owns the data directory any more. `reason` says why:
 *   `exited` (the recorded process is gone: a crash left the file; PostgreSQL itself cleans it
 *   up safely, checking that no orphaned backend still uses the old shared memory),
 *   `unreaped` (the recorded process has exited but is a zombie its parent has not reaped yet:
 *   a postmaster orphaned by a killed svc waits for PID 1, which may reap late or never, and
 *   PostgreSQL takes the pid as a running postmaster and refuses to start),
 *   `reused` (the pid now belongs to an unrelated process: PostgreSQL would refuse to start, so
 *   the file must be removed), `unreadable` (no pid in the file).
 * - `live`: a postgres process still owns this data directory.
 */
export type LockState =
  | { readonly _tag: "absent" }
  | { readonly _tag: "stale"; readonly pid: number; readonly reason: "exited" | "unreaped" | "reused" | "unreadable" }
  | { readonly _tag: "live"; readonly pid: number }

const readProc = (pid: number, entry: string): string | undefined => {
  try {
    return fs.readFileSync(`/proc/${pid}/${entry}`, "utf8")
  } catch {
    return undefined
  }
}

/** Whether `pid` exists: running, or a zombie (exited, not yet reaped), which still answers kill(0). */
const exists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: exists but belongs to another user (the postgres user when we run as root).
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const isZombie = (pid: number): boolean => /^\d+ \(.*\) Z/s.test(readProc(pid, "stat") ?? "")

/**
 * Whether the live process `pid` is a postgres server for `dataDir`: its executable is
 * `postgres` (a command line that merely mentions postgres, such as `psql postgres://...`, does
 * not count), and, where we may look, its working directory is the data directory.
 */
const isPostgresFor = (pid: number, dataDir: string): boolean => {
  const comm = readProc(pid, "comm")
  if (comm === undefined) return true // No /proc (macOS): a live pid is taken at its word.
  const argv0 = (readProc(pid, "cmdline") ?? "").split("\0")[0] ?? ""
  const executable = path.basename(argv0.split(" ")[0] ?? "")
  const isPostgres = ["postgres", "postmaster"].includes(comm.trim()) || ["postgres", "postmaster"].includes(executable)
  if (!isPostgres) return false
  try {
    // The postmaster runs inside its data directory.
    return fs.realpathSync(fs.readlinkSync(`/proc/${pid}/cwd`)) === fs.realpathSync(dataDir)
  } catch {
    return true // Not ours to inspect: assume it is.
  }
}

export const inspectStaleLock = (dataDir: string): LockState => {
  const lockPath = path.join(dataDir, "postmaster.pid")
  let text: string
  try {
    text = fs.readFileSync(lockPath, "utf8")
  } catch {
    return { _tag: "absent" }
  }
  const pid = Number.parseInt(text.split("\n")[0] ?? "", 10)
  if (!Number.isInteger(pid) || pid <= 0) return { _tag: "stale", pid: 0, reason: "unreadable" }
  if (!exists(pid)) return { _tag: "stale", pid, reason: "exited" }
  if (isZombie(pid)) return { _tag: "stale", pid, reason: "unreaped" }
  return isPostgresFor(pid, dataDir) ? { _tag: "live", pid } : { _tag: "stale", pid, reason: "reused" }
}

/**
 * The live processes (not zombies) whose working directory is `dataDir`: a postmaster and its
 * backends run there, so after a crash these are orphaned backends still attached to the old
 * shared memory. PostgreSQL's exact check for them reads that memory's id from `postmaster.pid`;
 * before we remove the file, we check here. Linux only (`/proc`); elsewhere the answer is
 * empty, and zombies cannot be told apart either (they count as live postmasters).
 * Processes we may not inspect (other users', when not root) are not counted.
 */
export const processesIn = (dataDir: string): ReadonlyArray<number> => {
  let entries: Array<string>
  let target: string
  try {
    entries = fs.readdirSync("/proc")
    target = fs.realpathSync(dataDir)
  } catch {
    return []
  }
  const found: Array<number> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    try {
      if (fs.readlinkSync(`/proc/${pid}/cwd`) === target && !isZombie(pid)) found.push(pid)
    } catch {
      // gone meanwhile, a kernel thread, or not ours to inspect
    }
  }
  return found
}

/** The parent of `pid` (Linux `/proc`), or undefined where it cannot be read. */
export const parentOf = (pid: number): number | undefined => {
  const stat = readProc(pid, "stat")
  // The command name in parentheses may hold blanks and parentheses: fields follow the last ")".
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ")
  const parent = Number.parseInt(fields?.[1] ?? "", 10)
  return Number.isInteger(parent) ? parent : undefined
}

/** Whether `pid` no longer exists or is a zombie. */
export const hasExited = (pid: number): boolean => !exists(pid) || isZombie(pid)
