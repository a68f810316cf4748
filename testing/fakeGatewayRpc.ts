/**
 * A loopback stand-in for a gateway's WebSocket RPC at the points a real gateway cannot be made to
 * fail on demand: it sends `connect.challenge`, then refuses the `connect` (as a gateway does for
 * a wrong token or an unpaired device) or accepts it, answers `agents.list`, and drops the
 * connection on any other request (a request that was sent and never answered).
 */
import { WebSocketServer } from "ws"

export interface FakeGatewayRpc {
  readonly url: string
  /** The methods received after `connect`, in order. */
  readonly received: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const startFakeGatewayRpc = async (mode: "refuse" | "drop"): Promise<FakeGatewayRpc> => {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 })
  await new Promise<void>((resolve) => server.once("listening", () => resolve()))
  const received: Array<string> = []
  server.on("connection", (socket) => {
    socket.send(JSON.stringify({ type: "event", event: "connect.challenge", payload: { nonce: "n-1", ts: Date.now() } }))
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { id: string; method: string }
      if (frame.method === "connect") {
        socket.send(JSON.stringify(mode === "refuse"
          ? { type: "res", id: frame.id, ok: false, error: { code: "NOT_PAIRED", message: "pairing required" } }
          : { type: "res", id: frame.id, ok: true, payload: { type: "hello-ok" } }))
        return
      }
      received.push(frame.method)
      if (frame.method === "agents.list") {
        socket.send(JSON.stringify({ type: "res", id: frame.id, ok: true, payload: { defaultId: "main", agents: [] } }))
      } else {
        socket.terminate()
      }
    })
  })
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => {
      for (const client of server.clients) client.terminate()
      server.close(() => resolve())
    })
  }
}
