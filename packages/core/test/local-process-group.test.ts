/**
 * When a gateway's process group counts as gone (`groupAlive`): when no member runs any more,
 * even while members that exited are zombies that their parent has not reaped. A gateway adopted
 * after its worker died has PID 1 for parent, which may reap late or never; stopping such a
 * gateway must not wait on its zombies. Real processes, real `/proc`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { groupAlive } from "@svc/core/drivers/compute"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"

const children: Array<ChildProcess> = []

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
})

const isZombie = (pid: number): boolean => {
  try {
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A process group whose only member has exited and is not reaped: `setsid` makes the short
 * `sleep` lead a group of its own, and its parent (the shell, turned into a long `sleep` by
 * `exec`) never reaps it. Resolves with that group's id.
 */
const zombieGroup = async (): Promise<number> => {
  const parent = spawn("sh", ["-c", "setsid sleep 0.1 & echo $!; exec sleep 60"], { stdio: ["ignore", "pipe", "ignore"] })
  children.push(parent)
  const pid = await new Promise<number>((resolve, reject) => {
    parent.stdout!.once("data", (chunk: Buffer) => resolve(Number.parseInt(chunk.toString("utf8"), 10)))
    parent.once("error", reject)
  })
  for (let i = 0; i < 100 && !isZombie(pid); i++) await sleep(50)
  expect(isZombie(pid)).toBe(true)
  return pid
}

describe("a gateway's process group", () => {
  it("is not alive when its only member is a zombie, though kill(0) still answers for it", async () => {
    const pgid = await zombieGroup()
    expect(() => process.kill(-pgid, 0)).not.toThrow()
    expect(await groupAlive(pgid)).toBe(false)
  })

  it("is alive while a member runs, and not once it has exited and been reaped", async () => {
    const leader = spawn("sleep", ["60"], { detached: true, stdio: "ignore" })
    children.push(leader)
    await new Promise((resolve) => leader.once("spawn", resolve))
    expect(await groupAlive(leader.pid!)).toBe(true)
    const exited = new Promise((resolve) => leader.once("exit", resolve))
    process.kill(-leader.pid!, "SIGKILL")
    await exited
    for (let i = 0; i < 100 && (await groupAlive(leader.pid!)); i++) await sleep(20)
    expect(await groupAlive(leader.pid!)).toBe(false)
  })

  it("is not alive when no such group exists", async () => {
    expect(await groupAlive(2 ** 22 + 7)).toBe(false)
  })
})
