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

/** A whole HTTP/1.1 response in the envelope, for a socket no response object writes to. */
const rawEnvelope = (status: number, code: string, message: string): string => {
  const requestId = RequestId.make()
  const body = JSON.stringify({ error: { code, message }, meta: { requestId } })
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Bad Request"}\r\n` +
    "content-type: application/json\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    "cache-control: no-store\r\n" +
    "connection: close\r\n" +
    "\r\n" +
    body
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
  const { message, status } = answerOf(error.code)
  socket.end(rawEnvelope(status, "INVALID_REQUEST", message))
}

/**
 * Node hands a CONNECT request to `connect` listeners only and, with none, closes the socket
 * without a word. We tunnel nothing: 501 NOT_IMPLEMENTED in the envelope (RFC 9110 15.6.2: a
 * method the server supports for no resource), then the connection is closed.
 */
export const answerConnect = (_request: IncomingMessage, socket: Duplex): void => {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  socket.end(rawEnvelope(501, "NOT_IMPLEMENTED", "The server does not tunnel connections (CONNECT)."))
}

/** A response in the envelope, with `headers` beside ours; the connection is closed after it. */
const writeEnvelope = (
  response: ServerResponse,
  status: number,
  error: { readonly code: string; readonly message: string },
  headers: Readonly<Record<string, string>> = {}
): void => {
  const requestId = RequestId.make()
  const body = JSON.stringify({ error, meta: { requestId } })
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-request-id": requestId,
    "cache-control": "no-store",
    connection: "close"
  })
  response.end(body)
}

/**
 * Node answers an `Expect` other than `100-continue` itself, with a bare 417 and no request
 * handler run; this answers it in the envelope. INVALID_REQUEST: SPEC 7.1 has no closer code.
 */
export const answerExpectation = (_request: IncomingMessage, response: ServerResponse): void =>
  writeEnvelope(response, 417, { code: "INVALID_REQUEST", message: "The Expect header asks for what the server cannot meet; send the request without it." })

/**
 * The server listens as soon as its layer is built, but the app is attached (a `request`
 * listener of the platform) only once every handler group and service is built, and detached
 * first at shutdown. A request in between would have no listener and hang until the client gave
 * up; it is answered 503 DEPENDENCY_UNAVAILABLE with `Retry-After` instead. Registered first,
 * this listener stays silent whenever another one serves the request.
 */
export const answerUnserved = (server: Server) => (_request: IncomingMessage, response: ServerResponse): void => {
  if (server.listenerCount("request") > 1) return
  writeEnvelope(
    response,
    503,
    { code: "DEPENDENCY_UNAVAILABLE", message: "The server is starting or stopping; retry shortly." },
    { "retry-after": "1" }
  )
}

/**
 * A node HTTP server whose protocol-level refusals (unparsable requests, CONNECT, an unmet
 * `Expect`), and requests that arrive while no app serves it, are in the envelope too.
 */
export const createEnvelopedServer = (): Server => {
  // Node's Host check answers with a bare 400; the pipeline makes the same check in the envelope.
  const server = createServer({ requireHostHeader: false })
  server.on("clientError", answerClientError)
  server.on("connect", answerConnect)
  server.on("checkExpectation", answerExpectation)
  server.on("request", answerUnserved(server))
  return server
}
