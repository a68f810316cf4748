import { NodeHttpServer } from "@effect/platform-node"
import { Data, Effect, Layer } from "effect"
import * as fs from "node:fs"
import { createEnvelopedServer } from "@svc/core/http"
import * as net from "node:net"
import * as path from "node:path"

export class ControlSocketError extends Data.TaggedError("ControlSocketError")<{ readonly message: string }> {}

const isListening = (socketPath: string): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = net.connect({ path: socketPath })
    probe.once("connect", () => {
      probe.destroy()
      resolve(true)
    })
    probe.once("error", () => resolve(false))
  })

/**
 * Prepares the socket path: a private parent directory, and no leftover socket from a crash.
 * A socket that still answers belongs to a running credential service: refuse to take it.
 */
const prepare = (socketPath: string) =>
  Effect.tryPromise({
    try: async () => {
      fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 })
      fs.chmodSync(path.dirname(socketPath), 0o700)
      if (fs.existsSync(socketPath)) {
        if (await isListening(socketPath)) throw new Error(`another credential service is listening on ${socketPath}`)
        fs.rmSync(socketPath, { force: true })
      }
    },
    catch: (cause) => new ControlSocketError({ message: cause instanceof Error ? cause.message : String(cause) })
  })

/**
 * An HTTP server on a Unix socket readable and writable by this user only (mode 0600), removed
 * when the server stops.
 */
export const controlSocketServer = (socketPath: string) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      yield* prepare(socketPath)
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socketPath, { force: true })))
      // The parent directory is 0700, so nobody else can reach the socket before the chmod.
      return NodeHttpServer.layer(createEnvelopedServer, { path: socketPath }).pipe(
        Layer.tap(() => Effect.sync(() => fs.chmodSync(socketPath, 0o600)))
      )
    })
  )
