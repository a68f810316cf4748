import * as fs from "node:fs"
import * as path from "node:path"

/**
 * What a `postmaster.pid` left in a data directory means.
 * - `absent`: no lock file.
 * - `stale`: no postgres process owns the data directory any more. `reason` says why:
 *   `exited` (the recorded process is gone: a crash left the file; PostgreSQL itself cleans it
 *   up safely, checking that no orphaned backend still uses the old shared memory),
 *   `reused` (the pid now belongs to an unrelated process: PostgreSQL would refuse to start, so
 *   the file must be removed), `unreadable` (no pid in the file).
 * - `live`: a postgres process still owns this data directory.
 */
export type LockState =
  | { readonly _tag: "absent" }
  | { readonly _tag: "stale"; readonly pid: number; readonly reason: "exited" | "reused" | "unreadable" }
  | { readonly _tag: "live"; readonly pid: number }

const readProc = (pid: number, entry: string): string | undefined => {
  try {
    return fs.readFileSync(`/proc/${pid}/${entry}`, "utf8")
  } catch {
    return undefined
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: exists but belongs to another user (the postgres user when we run as root).
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  // A zombie (exited, not yet reaped by its parent) still answers kill(0).
  return !/^\d+ \(.*\) Z/s.test(readProc(pid, "stat") ?? "")
}

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
  if (!isAlive(pid)) return { _tag: "stale", pid, reason: "exited" }
  return isPostgresFor(pid, dataDir) ? { _tag: "live", pid } : { _tag: "stale", pid, reason: "reused" }
}
