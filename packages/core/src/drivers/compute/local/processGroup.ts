/**
 * A process group as `/proc` shows it: the CPU time its members used, and whether any member
 * still runs. Readiness uses the CPU time to tell a gateway that is slow (still working, starved
 * on a busy host) from one that is stuck: only the stuck one is given up on, so a loaded host
 * does not turn slow starts into restarts. Stopping uses liveness to know when the group is gone.
 */
import * as fs from "node:fs/promises"

// Fields of /proc/<pid>/stat after the parenthesised command name (which may hold spaces):
// index 0 is field 3 (state), so field N is at index N - 3.
const STATE = 3 - 3
const PGRP = 5 - 3
const UTIME = 14 - 3
const STIME = 15 - 3
const CUTIME = 16 - 3
const CSTIME = 17 - 3

/** The `/proc/<pid>/stat` fields of every process in group `pgid`; undefined without `/proc`. */
const membersOf = async (pgid: number): Promise<ReadonlyArray<ReadonlyArray<string>> | undefined> => {
  const entries = await fs.readdir("/proc").catch(() => undefined)
  if (entries === undefined) return undefined
  const stats = await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map((pid) => fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined))
  )
  return stats
    .filter((stat) => stat !== undefined)
    .map((stat) => stat.slice(stat.lastIndexOf(")") + 2).split(" "))
    .filter((fields) => Number(fields[PGRP]) === pgid)
}

/** Clock ticks of CPU used by the live members of process group `pgid` (0 when none is left). */
export const groupCpuTicks = async (pgid: number): Promise<number> =>
  // Reaped children's time is added to their parent's cutime/cstime, so a helper that did
  // work and exited still counts.
  ((await membersOf(pgid)) ?? []).reduce(
    (sum, fields) => sum + [UTIME, STIME, CUTIME, CSTIME].reduce((part, index) => part + (Number(fields[index]) || 0), 0),
    0
  )

/**
 * Whether any member of group `pgid` still runs. `kill(-pgid, 0)` also answers for zombies:
 * members that exited and that their parent has not reaped. A gateway adopted after its worker
 * died has PID 1 for parent, which may reap seconds late (this machine) or never (a container
 * whose PID 1 is not an init), so a stopped gateway would look alive. Only members in another
 * state than `Z` count; without `/proc`, `kill` is taken at its word.
 */
export const groupAlive = async (pgid: number): Promise<boolean> => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    // EPERM: a member exists but belongs to another user (a confined gateway's own user).
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  const members = await membersOf(pgid)
  return members === undefined || members.some((fields) => fields[STATE] !== "Z")
}
