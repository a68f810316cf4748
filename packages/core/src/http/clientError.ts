import { createServer, type Server, STATUS_CODES } from "node:http"
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

/** A node HTTP server whose protocol-level refusals are in the envelope too. */
export const createEnvelopedServer = (): Server => {
  const server = createServer()
  server.on("clientError", answerClientError)
  return server
}
