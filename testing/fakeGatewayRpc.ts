/**
 * A loopback stand-in for a gateway's WebSocket RPC at the points a real gateway cannot be made to
 * fail on demand: it accepts the WebSocket and says nothing (`mute`), or sends `connect.challenge`
 * and then refuses the `connect` (`refuse`, as a gateway does for a wrong token or an unpaired
 * device) or accepts it, answers `agents.list` and drops the connection on any other request
 * (`drop`: a request that was sent and never answered). Its `/readyz` answers 200, so the service
 * takes it for a healthy gateway.
 */
import * as http from "node:http"
import { WebSocketServer } from "ws"

export interface FakeGatewayRpc {
  readonly url: string
  /** The methods received after `connect`, in order. */
  readonly received: ReadonlyArray<string>
  /** How many `connect` requests arrived. */
  readonly connects: number
  readonly close: () => Promise<void>
}

export const startFakeGatewayRpc = async (mode: "refuse" | "drop" | "mute"): Promise<FakeGatewayRpc> => {
  const web = http.createServer((request, response) => {
    response.writeHead(request.url === "/readyz" ? 200 : 404, { "content-type": "application/json" })
    response.end(request.url === "/readyz" ? '{"ready":true}' : "{}")
  })
  const server = new WebSocketServer({ server: web })
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", () => resolve()))
  const received: Array<string> = []
  let connects = 0
  server.on("connection", (socket) => {
    if (mode === "mute") return
    socket.send(JSON.stringify({ type: "event", event: "connect.challenge", payload: { nonce: "n-1", ts: Date.now() } }))
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { id: string; method: string }
      if (frame.method === "connect") {
        connects += 1
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
  const address = web.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    get connects() {
      return connects
    },
    close: () => new Promise<void>((resolve) => {
      for (const client of server.clients) client.terminate()
      server.close(() => web.close(() => resolve()))
    })
  }
}
