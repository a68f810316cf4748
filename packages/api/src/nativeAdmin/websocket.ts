/**
 * The Control UI's WebSocket, terminated here (SPEC 5.8; docs/decisions/native-admin.md). OpenClaw
 * authenticates a WebSocket by its first message, the `connect` request, not by the upgrade's
 * `Authorization` header. The browser's socket is accepted only once the gateway's is open; the
 * first browser message must be that `connect` request: every credential the browser put in
 * `params.auth` is dropped (token, password, bootstrap token, runtime identity tokens, anything
 * else) and the gateway token is put in `params.auth.password` (accepted by a token-mode gateway
 * like `auth.token`, and, unlike it, not covered by the browser's device signature, so the
 * browser's own device proof stays valid). Only `auth.deviceToken` is kept: the gateway issued
 * it to this browser's device key, it only works beside that key's signature (which covers it),
 * and dropping it would break that signature on every reconnect. Everything else is relayed
 * unchanged both ways, with the same text/binary kind, within `MAX_FRAME_BYTES`, except the
 * browser's calls of methods that write the gateway's configuration or update it: those are
 * answered here with an error response and not forwarded (`gatewayMethods.ts`).
 */
import * as http from "node:http"
import type { Duplex } from "node:stream"
import { WebSocket, WebSocketServer, type RawData } from "ws"
import { vetBrowserFrame } from "./gatewayMethods.js"

/** The gateway's own default frame limit (`policy.maxPayload`, 25 MiB). */
export const MAX_FRAME_BYTES = 25 * 1024 * 1024
/** The `connect` request is small; anything larger is refused before parsing. */
export const MAX_CONNECT_BYTES = 64 * 1024

/** Handshake headers `ws` writes itself; the browser's are not forwarded. */
const OWN_HANDSHAKE = new Set(["sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol", "connection", "upgrade"])

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The browser's first frame with only its credentials replaced, or `undefined` when it is not a
 * `connect` request (the socket is then closed). The device proof (`params.device`) is the
 * browser's own signature over the gateway's challenge and is kept.
 */
export const rewriteConnectFrame = (data: string, gatewayToken: string): string | undefined => {
  let frame: unknown
  try {
    frame = JSON.parse(data)
  } catch {
    return undefined
  }
  if (!isRecord(frame) || frame["type"] !== "req" || frame["method"] !== "connect" || !isRecord(frame["params"])) return undefined
  const offered = frame["params"]["auth"]
  const deviceToken = isRecord(offered) && typeof offered["deviceToken"] === "string" ? offered["deviceToken"] : undefined
  const auth = deviceToken === undefined ? { password: gatewayToken } : { password: gatewayToken, deviceToken }
  return JSON.stringify({ ...frame, params: { ...frame["params"], auth } })
}

const rawBytes = (data: RawData): Buffer =>
  Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)

const closeCode = (code: number): number => (code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 && code !== 1015 ? code : 1011)

export interface GatewaySocketTarget {
  readonly url: string
  readonly headers: http.OutgoingHttpHeaders
  readonly token: string
}

/**
 * Opens the gateway's socket, then accepts the browser's on `socket`. Calls `done` once: with 101
 * when both are closed, with the gateway's refusal status (the browser's socket is then answered
 * with that status and closed), or with `undefined` when the gateway could not be reached (or
 * the browser left before its handshake was answered). The returned function, and `signal`'s
 * abort, destroy both sockets at once (no closing handshake to wait for), which ends the relay.
 */
export const relayWebSocket = (
  incoming: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: GatewaySocketTarget,
  done: (status: number | undefined) => void,
  signal: AbortSignal
): () => void => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(target.headers)) {
    if (value === undefined || OWN_HANDSHAKE.has(name.toLowerCase())) continue
    headers[name] = Array.isArray(value) ? value.join(", ") : String(value)
  }
  const requested = String(incoming.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim()).filter((p) => p !== "")
  const gateway = new WebSocket(target.url, requested, { headers, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false, followRedirects: false })
  let browser: WebSocket | undefined
  let settled = false
  const settle = (status: number | undefined) => {
    if (settled) return
    settled = true
    done(status)
  }
  // The gateway speaks first (`connect.challenge`): held until the browser's socket is accepted.
  const early: Array<[RawData, boolean]> = []
  gateway.on("message", (data, isBinary) => {
    if (browser === undefined) early.push([data, isBinary])
    else browser.send(data, { binary: isBinary })
  })
  socket.once("close", () => {
    if (browser !== undefined) return
    gateway.terminate()
    settle(undefined)
  })
  gateway.on("unexpected-response", (_request, response) => {
    response.resume()
    const status = response.statusCode ?? 502
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
    gateway.terminate()
    settle(status)
  })
  gateway.on("error", () => {
    if (!settled && gateway.readyState !== WebSocket.OPEN) settle(undefined)
  })
  gateway.once("open", () => {
    const server = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
      handleProtocols: () => gateway.protocol === "" ? false : gateway.protocol
    })
    server.handleUpgrade(incoming, socket, head, (accepted) => {
      browser = accepted
      for (const [data, isBinary] of early.splice(0)) accepted.send(data, { binary: isBinary })
      let first = true
      accepted.on("message", (data, isBinary) => {
        if (!first) {
          const verdict = vetBrowserFrame(rawBytes(data))
          if (verdict._tag === "Forward") gateway.send(data, { binary: isBinary })
          else if (verdict._tag === "Refuse") accepted.send(verdict.response)
          else {
            accepted.close(1008, "Each message must be one JSON request.")
            gateway.close(1008)
          }
          return
        }
        first = false
        const text = rawBytes(data)
        const rewritten = !isBinary && text.length <= MAX_CONNECT_BYTES ? rewriteConnectFrame(text.toString("utf8"), target.token) : undefined
        if (rewritten === undefined) {
          accepted.close(1008, "The first message must be the connect request.")
          gateway.close(1008)
          return
        }
        gateway.send(rewritten)
      })
      let open = 2
      const closed = () => {
        if (--open === 0) {
          server.close()
          settle(101)
        }
      }
      accepted.once("close", (code, reason) => {
        if (gateway.readyState === WebSocket.OPEN) gateway.close(closeCode(code), reason)
        else gateway.terminate()
        closed()
      })
      gateway.once("close", (code, reason) => {
        if (accepted.readyState === WebSocket.OPEN) accepted.close(closeCode(code), reason)
        else accepted.terminate()
        closed()
      })
      accepted.on("error", () => accepted.terminate())
      gateway.on("error", () => gateway.terminate())
    })
  })
  const destroy = () => {
    browser?.terminate()
    gateway.terminate()
    socket.destroy()
  }
  if (signal.aborted) destroy()
  else signal.addEventListener("abort", destroy, { once: true })
  return destroy
}
