/**
 * Zombies for tests: processes that have exited and that their parent does not reap, as a
 * crashed postmaster or gateway is until PID 1 reaps it (seconds late here, never under a PID 1
 * that is not an init). Linux (`/proc`) only.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"

export const isZombie = (pid: number): boolean => {
  try {
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

/**
 * Starts a short `sleep` whose parent (the shell it was started from, turned into a long `sleep`
 * by `exec`) never reaps it, and resolves once it is a zombie, with its pid and that parent (to
 * kill afterwards). With `ownGroup`, `setsid` makes it lead a process group of its own, of which
 * it is then the only member.
 */
export const startZombie = async (ownGroup = false): Promise<{ readonly pid: number; readonly parent: ChildProcess }> => {
  const short = ownGroup ? "setsid sleep 0.1" : "sleep 0.1"
  const parent = spawn("sh", ["-c", `${short} & echo $!; exec sleep 60`], { stdio: ["ignore", "pipe", "ignore"] })
  const pid = await new Promise<number>((resolve, reject) => {
    parent.stdout!.once("data", (chunk: Buffer) => resolve(Number.parseInt(chunk.toString("utf8"), 10)))
    parent.once("error", reject)
  })
  for (let i = 0; i < 100 && !isZombie(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  if (!isZombie(pid)) throw new Error(`process ${pid} did not become a zombie`)
  return { pid, parent }
}
