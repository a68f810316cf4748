/**
 * When a gateway's process group counts as gone (`groupAlive`): when no member runs any more,
 * even while members that exited are zombies that their parent has not reaped. A gateway adopted
 * after its worker died has PID 1 for parent, which may reap late or never; stopping such a
 * gateway must not wait on its zombies. Real processes, real `/proc`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { groupAlive } from "@svc/core/drivers/compute"
import { type ChildProcess, spawn } from "node:child_process"
import { startZombie } from "../../../testing/zombie.js"

const children: Array<ChildProcess> = []

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A process group whose only member has exited and is not reaped. Resolves with its id. */
const zombieGroup = async (): Promise<number> => {
  const zombie = await startZombie(true)
  children.push(zombie.parent)
  return zombie.pid
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
