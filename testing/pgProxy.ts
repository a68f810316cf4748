/**
 * A loopback TCP proxy in front of a real PostgreSQL, for faults a test cannot get from the
 * server alone: answering a client's Terminate with the FATAL a shutting-down server sends (the
 * race of a Ctrl-C, made deterministic), cutting every connection (a database that became
 * unreachable to one process while the test's own connections still work), and freezing them (a
 * database that stops answering while its connections stay open).
 */
import * as net from "node:net"

export const ADMIN_SHUTDOWN = "terminating connection due to administrator command"

/** A FATAL ErrorResponse as PostgreSQL's fast shutdown sends it to each backend's client. */
const adminShutdownMessage = (): Buffer => {
  const fields = Buffer.concat(
    [["S", "FATAL"], ["V", "FATAL"], ["C", "57P01"], ["M", ADMIN_SHUTDOWN]].map(([code, value]) =>
      Buffer.concat([Buffer.from(code!), Buffer.from(`${value}\0`)])
    )
  )
  const body = Buffer.concat([fields, Buffer.from([0])])
  const header = Buffer.alloc(5)
  header.write("E", 0)
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

export interface PgProxy {
  /** `url` with its host and port replaced by the proxy's. */
  readonly via: (url: string) => string
  /** How many Terminates were answered with the FATAL (`fatalOnTerminate`). */
  readonly fatalsSent: () => number
  /** Closes every connection and refuses new ones until `restore`. */
  readonly cut: () => void
  readonly restore: () => void
  /** Stops forwarding in both directions, connections kept open (new ones too), until `thaw`. */
  readonly freeze: () => void
  readonly thaw: () => void
  readonly close: () => Promise<void>
}

export const startPgProxy = (target: string, options: { readonly fatalOnTerminate?: boolean } = {}): Promise<PgProxy> => {
  const upstreamUrl = new URL(target)
  const sockets = new Set<net.Socket>()
  let fatals = 0
  let cut = false
  let frozen = false
  const track = (socket: net.Socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  }
  const server = net.createServer((client) => {
    if (cut) return void client.destroy()
    const upstream = net.connect(Number(upstreamUrl.port), upstreamUrl.hostname)
    track(client)
    track(upstream)
    upstream.pipe(client)
    upstream.on("error", () => client.destroy())
    client.on("error", () => upstream.destroy())
    client.on("close", () => upstream.destroy())
    let pending = Buffer.alloc(0)
    let startup = true
    client.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        // The startup message has no type byte; every later message does.
        const headerLength = startup ? 4 : 5
        if (pending.length < headerLength) return
        const length = pending.readInt32BE(startup ? 0 : 1) + (startup ? 0 : 1)
        if (pending.length < length) return
        const type = startup ? "" : String.fromCharCode(pending[0]!)
        const message = pending.subarray(0, length)
        pending = pending.subarray(length)
        startup = false
        if (type === "X" && options.fatalOnTerminate === true) {
          fatals++
          upstream.unpipe(client)
          upstream.destroy()
          client.end(adminShutdownMessage())
          return
        }
        upstream.write(message)
      }
    })
    if (frozen) {
      client.pause()
      upstream.pause()
    }
  })
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      resolve({
        via: (url) => {
          const proxied = new URL(url)
          proxied.host = `127.0.0.1:${port}`
          return proxied.toString()
        },
        fatalsSent: () => fatals,
        cut: () => {
          cut = true
          for (const socket of sockets) socket.destroy()
        },
        restore: () => {
          cut = false
        },
        freeze: () => {
          frozen = true
          for (const socket of sockets) socket.pause()
        },
        thaw: () => {
          frozen = false
          for (const socket of sockets) socket.resume()
        },
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  )
}
