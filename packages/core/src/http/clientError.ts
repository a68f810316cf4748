import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { RequestId } from "../schema/index.js"

/** Node's parser codes for a request head over its size limit (16 KiB by default). */
const HEAD_TOO_LARGE = new Set(["HPE_HEADER_OVERFLOW"])
const TIMED_OUT = new Set(["ERR_HTTP_REQUEST_TIMEOUT"])

const answerOf = (code: string | undefined): { readonly status: number; readonly message: string } => {
  if (code !== undefined && HEAD_TOO_LARGE.has(code)) {
    return { status: 431, message: "The request line and headers are larger than the server accepts." }
  }
  if (code !== undefined && TIMED_OUT.has(code)) {
    return { status: 408, message: "The request was not received in time." }
  }
  return { status: 400, message: "The request is not valid HTTP." }
}

/**
 * Node answers a request it cannot parse (a malformed header line, a head over 16 KiB) by
 * itself, before any handler runs, with a bare status line. This answers it in the SPEC 2.1
 * envelope instead, with a fresh request id in `meta` and in `x-request-id`, whenever the
 * socket can still take a response. The code is INVALID_REQUEST (SPEC 7.1 has none closer);
 * the status says which problem it was. Written raw: there is no request or response object.
 */
export const answerClientError = (error: Error & { readonly code?: string }, socket: Duplex): void => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  const requestId = RequestId.make()
  const { message, status } = answerOf(error.code)
  const body = JSON.stringify({ error: { code: "INVALID_REQUEST", message }, meta: { requestId } })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Bad Request"}\r\n` +
      "content-type: application/json\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\n` +
      "cache-control: no-store\r\n" +
      "connection: close\r\n" +
      "\r\n" +
      body
  )
}

/**
 * The server listens as soon as its layer is built, but the app is attached (a `request`
 * listener of the platform) only once every handler group and service is built, and detached
 * first at shutdown. A request in between would have no listener and hang until the client gave
 * up; it is answered 503 DEPENDENCY_UNAVAILABLE with `Retry-After` instead. Registered first,
 * this listener stays silent whenever another one serves the request.
 */
export const answerUnserved = (server: Server) => (_request: IncomingMessage, response: ServerResponse): void => {
  if (server.listenerCount("request") > 1) return
  const requestId = RequestId.make()
  const body = JSON.stringify({
    error: { code: "DEPENDENCY_UNAVAILABLE", message: "The server is starting or stopping; retry shortly." },
    meta: { requestId }
  })
  response.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-request-id": requestId,
    "cache-control": "no-store",
    "retry-after": "1",
    connection: "close"
  })
  response.end(body)
}

/**
 * A node HTTP server whose protocol-level refusals, and requests that arrive while no app
 * serves it, are in the envelope too.
 */
export const createEnvelopedServer = (): Server => {
  const server = createServer()
  server.on("clientError", answerClientError)
  server.on("request", answerUnserved(server))
  return server
}
