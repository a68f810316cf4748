/**
 * Relaying one admitted request to the gateway's private endpoint with Node's `http` (see
 * docs/decisions/native-admin.md for why no proxy library): the browser's request body streams
 * to the gateway and the gateway's answer streams back on the raw Node response; a WebSocket
 * handshake is terminated here and relayed message by message (websocket.ts).
 */
import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import type { PrivateEndpoint } from "@svc/core/drivers/compute"
import { DependencyUnavailable } from "@svc/core/errors"
import { Effect } from "effect"
import * as http from "node:http"
import { browserResponseHeaders, gatewayRequestHeaders } from "./headers.js"
import { relayWebSocket } from "./websocket.js"

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

/**
 * A WebSocket handshake: terminated here and relayed frame by frame (websocket.ts), so that the
 * gateway token can be put in the Control UI's `connect` request. Aborting `signal`, or
 * interrupting the relay, destroys both sockets.
 */
export const relayUpgrade = (
  request: HttpServerRequest.HttpServerRequest,
  endpoint: PrivateEndpoint,
  signal: AbortSignal
): Effect.Effect<Relayed, DependencyUnavailable> =>
  Effect.async<Relayed, DependencyUnavailable>((resume) => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const target = new URL(endpoint.url)
    const abort = relayWebSocket(incoming, incoming.socket, Buffer.alloc(0), {
      url: `ws://${target.host}${pathOf(incoming.url)}`,
      headers: gatewayRequestHeaders(incoming.headers, { host: target.host, token: endpoint.token }, true),
      token: endpoint.token
    }, (status) => resume(status === undefined
      ? Effect.zipRight(Effect.logWarning("native admin: the gateway WebSocket failed"), Effect.fail(unreachable()))
      : Effect.succeed({ status })), signal)
    return Effect.sync(abort)
  })

/** A plain HTTP request (not a WebSocket handshake), streamed both ways. */
export const relay = (
  request: HttpServerRequest.HttpServerRequest,
  endpoint: PrivateEndpoint,
  requestId: string
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
      headers: gatewayRequestHeaders(incoming.headers, { host: target.host, token: endpoint.token }, false)
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
    incoming.pipe(outgoing)
    return Effect.sync(() => outgoing.destroy())
  })
