import * as fs from "node:fs"
import * as path from "node:path"
import { hasExited, parentOf } from "./staleLock.js"

/**
 * The postmaster runs in a process group of its own (postmaster.ts), so a `kill -9` of `svc
 * start` (or of its whole group) leaves it running with nobody to stop it. The process that
 * started it is recorded beside the cluster; a later start finds such an orphan (its parent is
 * no longer that process) and stops it, where it used to refuse to start until someone did.
 */
const ownerFile = (dir: string): string => path.join(dir, "postmaster.owner")

/** Records this process as the one that started the postmaster of the cluster in `dir`. */
export const recordOwner = (dir: string): void => fs.writeFileSync(ownerFile(dir), `${process.pid}\n`, { mode: 0o600 })

/**
 * Whether the running postmaster `pid` of the cluster in `dir` was left behind: its parent is
 * not the process recorded as having started it. Unknown (no record from an older version, no
 * `/proc`) counts as not orphaned: a server another process still uses is never stopped.
 */
export const isOrphaned = (dir: string, pid: number): boolean => {
  let owner: number
  try {
    owner = Number.parseInt(fs.readFileSync(ownerFile(dir), "utf8"), 10)
  } catch {
    return false
  }
  const parent = parentOf(pid)
  return Number.isInteger(owner) && parent !== undefined && parent !== owner
}

/** Asks an orphaned postmaster to shut down (fast shutdown) and waits for it to exit. */
export const stopOrphan = async (pid: number, waitMs: number): Promise<boolean> => {
  try {
    process.kill(pid, "SIGINT")
  } catch {
    return true
  }
  const deadline = Date.now() + waitMs
  while (!hasExited(pid)) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return true
}
