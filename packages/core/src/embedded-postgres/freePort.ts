import * as fs from "node:fs"
import * as net from "node:net"

/**
 * Ports below the kernel's ephemeral range: the kernel hands those out to outgoing connections
 * and to `listen(0)`, so a port chosen there (and closed again) can be taken by any connection
 * before its new owner binds it. A port below the range is only ever taken by someone who asks
 * for it by number. Linux's default range starts at 32768.
 */
const ephemeralStart = (): number => {
  try {
    const [low] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)
    const start = Number(low)
    return Number.isInteger(start) && start > 2048 ? start : 32768
  } catch {
    return 32768
  }
}

const LOWEST = 10000
const TRIES = 20

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

const anyPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now, for a process that binds it a
 * moment later (the embedded PostgreSQL, a child process in tests). Chosen at random below the
 * ephemeral range (see above); when none of a few such ports is free, any free port.
 */
export const freePort = (): Promise<number> => freePortDrawn(Math.random)

/** `freePort` with its candidates drawn by `random` (in [0, 1)), for tests. */
export const freePortDrawn = async (random: () => number): Promise<number> => {
  const highest = ephemeralStart() - 1
  if (highest > LOWEST) {
    for (let i = 0; i < TRIES; i++) {
      const port = LOWEST + Math.floor(random() * (highest - LOWEST + 1))
      if (await bindable(port)) return port
    }
  }
  return anyPort()
}
