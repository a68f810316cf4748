/**
 * The CPU time a process group has used, read from `/proc`. Readiness uses it to tell a gateway
 * that is slow (still working, starved on a busy host) from one that is stuck: only the stuck one
 * is given up on, so a loaded host does not turn slow starts into restarts.
 */
import * as fs from "node:fs/promises"

// Fields of /proc/<pid>/stat after the parenthesised command name (which may hold spaces):
// index 0 is field 3 (state), so field N is at index N - 3.
const PGRP = 5 - 3
const UTIME = 14 - 3
const STIME = 15 - 3
const CUTIME = 16 - 3
const CSTIME = 17 - 3

const ticksOf = async (pid: string, pgid: number): Promise<number> => {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined)
  if (stat === undefined) return 0
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  if (Number(fields[PGRP]) !== pgid) return 0
  // Reaped children's time is added to their parent's cutime/cstime, so a helper that did
  // work and exited still counts.
  return [UTIME, STIME, CUTIME, CSTIME].reduce((sum, index) => sum + (Number(fields[index]) || 0), 0)
}

/** Clock ticks of CPU used by the live members of process group `pgid` (0 when none is left). */
export const groupCpuTicks = async (pgid: number): Promise<number> => {
  const entries = await fs.readdir("/proc").catch((): Array<string> => [])
  const ticks = await Promise.all(entries.filter((entry) => /^\d+$/.test(entry)).map((pid) => ticksOf(pid, pgid)))
  return ticks.reduce((sum, n) => sum + n, 0)
}
