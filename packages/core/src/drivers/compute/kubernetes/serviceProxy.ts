/**
 * The API server's Service proxy as an endpoint resolver, for a service that runs outside the
 * cluster (`endpoints: "apiServerProxy"`): like `kubectl proxy`, one loopback listener per
 * gateway Service forwards every request (and WebSocket upgrade) to
 * `/api/v1/namespaces/<ns>/services/http:<service>:<port>/proxy/...` with the kubeconfig's
 * credentials. A listener per Service keeps the gateway's own paths at the root, as callers
 * (probes, the native admin proxy) address a gateway by host and port only.
 *
 * Before handing out a listener the resolver checks that the Service has a ready endpoint: a
 * Service without one fails `GATEWAY_UNREACHABLE`, an API server that cannot be reached
 * `CLUSTER_UNAVAILABLE`, both retryable (the API answers 503 for them).
 */
import * as http from "node:http"
import * as https from "node:https"
import type { Socket } from "node:net"
import type { V1Endpoints } from "@kubernetes/client-node"
import { Effect } from "effect"
import { type Cluster, failure, KubernetesCodes } from "./client.js"
import type { EndpointResolver, GatewayAddress } from "./endpoints.js"

/**
 * Never forwarded: headers of one hop (RFC 9110 7.6.1), `host` (the API server's), and
 * `authorization`: the API server authenticates the request with it and removes it, so a gateway
 * token there would only reach the API server (and its audit log), never the gateway.
 */
const NOT_FORWARDED = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "host", "authorization"])

export const serviceProxyPath = (address: GatewayAddress): string =>
  `/api/v1/namespaces/${encodeURIComponent(address.namespace)}/services/http:${encodeURIComponent(address.service)}:${address.port}/proxy`

const hasReadyAddress = (endpoints: V1Endpoints | undefined): boolean =>
  (endpoints?.subsets ?? []).some((subset) => (subset.addresses ?? []).length > 0)

export interface ServiceProxyResolver {
  readonly resolve: EndpointResolver
  /** The loopback base URL forwarding to the Service's proxy, without the endpoint check. */
  readonly forwarder: (address: GatewayAddress) => Effect.Effect<string>
  /** Closes every listener (a process closes them on exit anyway). */
  readonly close: () => Promise<void>
}

export const apiServerProxyResolver = (cluster: Cluster): ServiceProxyResolver => {
  const listeners = new Map<string, Promise<{ readonly server: http.Server; readonly url: string }>>()

  const target = async (address: GatewayAddress, path: string | undefined, upgrade: boolean) => {
    const server = cluster.config.getCurrentCluster()?.server
    if (server === undefined) throw new Error("the kubeconfig has no current cluster")
    const url = new URL(`${serviceProxyPath(address)}${path ?? "/"}`, server)
    const options: https.RequestOptions = { method: "GET", headers: {} }
    await cluster.config.applyToHTTPSOptions(options)
    return { url, options, transport: url.protocol === "https:" ? https : http, upgrade }
  }

  const forwardHeaders = (
    incoming: http.IncomingHttpHeaders,
    credentials: https.RequestOptions["headers"],
    upgrade: boolean
  ): http.OutgoingHttpHeaders => {
    const headers: http.OutgoingHttpHeaders = {}
    for (const [name, value] of Object.entries(incoming)) {
      if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value
    }
    if (upgrade) Object.assign(headers, { connection: "Upgrade", upgrade: incoming.upgrade ?? "websocket" })
    return { ...headers, ...(credentials as http.OutgoingHttpHeaders) }
  }

  const onRequest = (address: GatewayAddress) => (incoming: http.IncomingMessage, response: http.ServerResponse) => {
    void target(address, incoming.url, false).then(({ url, options, transport }) => {
      const outgoing = transport.request(url, {
        ...options,
        method: incoming.method ?? "GET",
        headers: forwardHeaders(incoming.headers, options.headers, false)
      }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      })
      // The API server did not answer: 502 while nothing was sent, else the connection ends.
      outgoing.on("error", () => (response.headersSent ? response.destroy() : response.writeHead(502).end()))
      incoming.pipe(outgoing)
    }, () => {
      response.writeHead(502).end()
    })
  }

  const onUpgrade = (address: GatewayAddress) => (incoming: http.IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy())
    void target(address, incoming.url, true).then(({ url, options, transport }) => {
      const outgoing = transport.request(url, { ...options, method: "GET", headers: forwardHeaders(incoming.headers, options.headers, true) })
      outgoing.on("upgrade", (answer, upstream, upstreamHead) => {
        const lines = [`HTTP/1.1 ${answer.statusCode ?? 101} ${answer.statusMessage ?? "Switching Protocols"}`]
        for (let i = 0; i < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`)
        socket.write(`${lines.join("\r\n")}\r\n\r\n`)
        if (upstreamHead.length > 0) socket.write(upstreamHead)
        if (head.length > 0) upstream.write(head)
        upstream.on("error", () => socket.destroy())
        upstream.pipe(socket).pipe(upstream)
      })
      // Not upgraded (the API server refused, or no endpoint): its answer, then close.
      outgoing.on("response", (answer) => {
        socket.end(`HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ""}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`)
        answer.resume()
      })
      outgoing.on("error", () => socket.destroy())
      outgoing.end()
    }, () => socket.destroy())
  }

  const listen = (address: GatewayAddress) =>
    new Promise<{ readonly server: http.Server; readonly url: string }>((resolve, reject) => {
      const server = http.createServer(onRequest(address))
      server.on("upgrade", onUpgrade(address))
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const bound = server.address()
        if (bound === null || typeof bound === "string") return reject(new Error("no loopback port"))
        server.unref()
        resolve({ server, url: `http://127.0.0.1:${bound.port}` })
      })
    })

  const forwarder = (address: GatewayAddress) =>
    Effect.promise(() => {
      const key = `${address.namespace}/${address.service}:${address.port}`
      let listener = listeners.get(key)
      if (listener === undefined) {
        listener = listen(address)
        listeners.set(key, listener)
      }
      return listener.then((found) => found.url)
    })

  const resolve: EndpointResolver = (address) =>
    cluster.read<V1Endpoints>({ apiVersion: "v1", kind: "Endpoints", namespace: address.namespace, name: address.service }).pipe(
      Effect.flatMap((endpoints) =>
        hasReadyAddress(endpoints)
          ? forwarder(address)
          : Effect.fail(failure(KubernetesCodes.GATEWAY_UNREACHABLE, "The gateway's Service has no ready endpoint.", false))
      )
    )

  const close = async () => {
    const all = await Promise.all([...listeners.values()].map((listener) => listener.catch(() => undefined)))
    listeners.clear()
    await Promise.all(all.map((found) => found === undefined ? undefined : new Promise((done) => found.server.close(done))))
  }

  return { resolve, forwarder, close }
}
