import { describe, expect, it } from "@effect/vitest"
import { assignPort, candidatePorts, recordedPort, releasePort } from "@svc/core/drivers/compute"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const scratch = () => fs.mkdtemp(path.join(os.tmpdir(), "svc-ports-"))

/**
 * A range of three candidates, 120 apart. The tests pick their ranges between the gateways'
 * own ports (20 000 and up, a few at a time) and Linux's ephemeral range (32 768 and up): a port
 * in the ephemeral range may be any test's outgoing connection at that moment.
 */
const range = (first: number) => ({ first, spacing: 120, last: first + 240 })

const agent = async (root: string, name: string) => {
  const dir = path.join(root, "agents", name)
  await fs.mkdir(dir, { recursive: true })
  return { registry: path.join(root, "ports"), owner: dir, portFile: path.join(dir, "port") }
}

const occupy = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen({ host: "127.0.0.1", port }, () => resolve(server))
  })

describe("gateway port allocator", () => {
  it("hands out base ports at least 120 apart and refuses a closer spacing", () => {
    expect(candidatePorts({ first: 20_000, spacing: 120, last: 20_400 })).toEqual([20_000, 20_120, 20_240, 20_360])
    expect(() => candidatePorts({ first: 20_000, spacing: 100, last: 20_400 })).toThrow()
  })

  it("gives each Agent its own port, keeps it across restarts, and takes over claims of removed Agents", async () => {
    const root = await scratch()
    const r = range(24_000 + Math.floor(Math.random() * 20) * 120)
    const a = await agent(root, "a")
    const b = await agent(root, "b")
    const portA = await assignPort({ ...a, range: r })
    const portB = await assignPort({ ...b, range: r })
    expect(portA).toBe(r.first)
    expect(portB).toBe(r.first + 120)
    // A restart (a new call) finds the recorded port again.
    expect(await assignPort({ ...a, range: r })).toBe(portA)
    expect(await recordedPort(a)).toBe(portA)
    // Agent a is removed without releasing (its Namespace was torn down): c takes over its claim.
    await fs.rm(a.owner, { recursive: true })
    const c = await agent(root, "c")
    expect(await assignPort({ ...c, range: r })).toBe(portA)
    // Released claims are free again.
    await releasePort(b.registry, b.owner, portB)
    const d = await agent(root, "d")
    expect(await assignPort({ ...d, range: r })).toBe(portB)
  })

  it("skips a port some other process listens on, and moves an Agent whose port was taken", async () => {
    const root = await scratch()
    const r = range(27_000 + Math.floor(Math.random() * 15) * 120)
    const a = await agent(root, "a")
    const busy = await occupy(r.first)
    try {
      expect(await assignPort({ ...a, range: r })).toBe(r.first + 120)
    } finally {
      busy.close()
    }
    const taken = await occupy(r.first + 120)
    try {
      expect(await assignPort({ ...a, range: r })).toBe(r.first)
      expect(await recordedPort(a)).toBe(r.first)
    } finally {
      taken.close()
    }
  })

  it("fails when every candidate is taken", async () => {
    const root = await scratch()
    const r = { first: 29_500 + Math.floor(Math.random() * 20) * 120, spacing: 120, last: 0 }
    const only = { ...r, last: r.first }
    const a = await agent(root, "a")
    const b = await agent(root, "b")
    await assignPort({ ...a, range: only })
    await expect(assignPort({ ...b, range: only })).rejects.toThrow(/no free gateway port/)
  })
})
