/**
 * Relaying one admitted request to the gateway's private endpoint with Node's `http` (see
 * docs/decisions/native-admin.md for why no proxy library): the browser's request body streams
 * to the gateway and the gateway's answer streams back on the raw Node response; a WebSocket
 * handshake is relayed and both sockets are then piped to each other until either closes.
 */
import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import type { PrivateEndpoint } from "@svc/core/drivers/compute"
import { DependencyUnavailable } from "@svc/core/errors"
import { Effect } from "effect"
import * as http from "node:http"
import type { Duplex } from "node:stream"
import { browserResponseHeaders, gatewayRequestHeaders } from "./headers.js"

/** What happened, for the access log: the gateway's status (101 for a relayed WebSocket). */
export interface Relayed {
  readonly status: number
}

const unreachable = () => new DependencyUnavailable({ message: "The Agent's gateway is not reachable." })

/** Only the path and query go to the gateway, even for an absolute-form request target. */
const pathOf = (url: string | undefined): string => {
  const parsed = new URL(url ?? "/", "http://gateway.invalid")
  return `${parsed.pathname}${parsed.search}`
}

const statusLine = (response: http.IncomingMessage): string => {
  const lines = [`HTTP/1.1 ${response.statusCode ?? 101} ${response.statusMessage ?? "Switching Protocols"}`]
  for (let i = 0; i < response.rawHeaders.length; i += 2) {
    const name = response.rawHeaders[i]!
    if (name.toLowerCase() === "set-cookie") continue
    lines.push(`${name}: ${response.rawHeaders[i + 1]!}`)
  }
  return `${lines.join("\r\n")}\r\n\r\n`
}

/** Both sockets piped to each other; resolves once both are closed. */
const splice = (client: Duplex, gateway: Duplex, head: Buffer): Promise<void> =>
  new Promise((resolve) => {
    let open = 2
    const closed = () => {
      client.destroy()
      gateway.destroy()
      if (--open === 0) resolve()
    }
    client.once("close", closed)
    gateway.once("close", closed)
    client.on("error", () => client.destroy())
    gateway.on("error", () => gateway.destroy())
    if (head.length > 0) client.write(head)
    gateway.pipe(client)
    client.pipe(gateway)
  })

export const relay = (
  request: HttpServerRequest.HttpServerRequest,
  endpoint: PrivateEndpoint,
  requestId: string,
  upgrade: boolean
): Effect.Effect<Relayed, DependencyUnavailable> =>
  Effect.async<Relayed, DependencyUnavailable>((resume) => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const target = new URL(endpoint.url)
    const outgoing = http.request({
      protocol: "http:",
      hostname: target.hostname,
      port: target.port,
      method: incoming.method,
      path: pathOf(incoming.url),
      headers: gatewayRequestHeaders(incoming.headers, { host: target.host, token: endpoint.token }, upgrade)
    })
    let answered = false
    outgoing.on("error", (error) => {
      if (answered) return
      answered = true
      resume(Effect.zipRight(
        Effect.logWarning("native admin: the gateway request failed", { cause: String(error) }),
        Effect.fail(unreachable())
      ))
    })
    outgoing.on("upgrade", (response, gatewaySocket, head) => {
      answered = true
      const client = incoming.socket
      client.write(statusLine(response))
      void splice(client, gatewaySocket, head).then(() => resume(Effect.succeed({ status: 101 })))
    })
    outgoing.on("response", (response) => {
      answered = true
      const browser = NodeHttpServerRequest.toServerResponse(request)
      browser.writeHead(response.statusCode ?? 502, browserResponseHeaders(response.headers, requestId))
      response.pipe(browser)
      let finished = false
      const done = () => {
        if (finished) return
        finished = true
        resume(Effect.succeed({ status: response.statusCode ?? 502 }))
      }
      browser.once("finish", done)
      browser.once("close", () => {
        response.destroy()
        done()
      })
    })
    if (upgrade) outgoing.end()
    else incoming.pipe(outgoing)
    return Effect.sync(() => outgoing.destroy())
  })
