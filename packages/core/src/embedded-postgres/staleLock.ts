import * as fs from "node:fs"
import * as path from "node:path"

/**
 * What a `postmaster.pid` left in a data directory means.
 * - `absent`: no lock file.
 * - `stale`: the recorded process is gone (or is not a postgres process any more): a crash
 *   left it behind, and it is safe to remove.
 * - `live`: a postgres process still owns this data directory.
 */
export type LockState =
  | { readonly _tag: "absent" }
  | { readonly _tag: "stale"; readonly pid: number }
  | { readonly _tag: "live"; readonly pid: number }

const isPostgresProcess = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: exists but belongs to another user (the postgres user when we run as root).
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
    return /postgres/.test(cmdline)
  } catch {
    // No /proc (macOS): a live pid is taken at its word.
    return true
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
  if (!Number.isInteger(pid) || pid <= 0) return { _tag: "stale", pid: 0 }
  return isPostgresProcess(pid) ? { _tag: "live", pid } : { _tag: "stale", pid }
}
