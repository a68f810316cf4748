import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as net from "node:net"
import { freePort, freePortDrawn } from "@svc/core/embedded-postgres"

const ephemeralStart = Number(fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])

const listen = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve(server))
  })

describe("freePort", () => {
  it("picks ports below the kernel's ephemeral range, which outgoing connections and listen(0) never take", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()))
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10000)
      expect(port).toBeLessThan(ephemeralStart)
    }
    // Random, not a fixed sequence.
    expect(new Set(ports).size).toBeGreaterThan(10)
  })

  it("passes over a port that is being listened on and takes the next candidate", async () => {
    const taken = await freePort()
    const server = await listen(taken)
    try {
      // The same draw that gave `taken`, then a different one.
      const span = ephemeralStart - 10000
      const draws = [(taken - 10000 + 0.5) / span, 0.5]
      let calls = 0
      const port = await freePortDrawn(() => draws[Math.min(calls++, 1)]!)
      expect(calls).toBe(2)
      expect(port).toBe(10000 + Math.floor(0.5 * span))
      expect(port).not.toBe(taken)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("falls back to any free port when every candidate is taken", async () => {
    const taken = await freePort()
    const server = await listen(taken)
    try {
      const span = ephemeralStart - 10000
      const port = await freePortDrawn(() => (taken - 10000 + 0.5) / span)
      expect(port).not.toBe(taken)
      expect(port).toBeGreaterThanOrEqual(ephemeralStart)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
