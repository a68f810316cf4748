/**
 * Clients for the limit tests of the credential service's client listener: raw HTTP/1.1 over a
 * socket (to see exactly what Node's parser answers) and a request whose body is streamed in
 * chunks until the listener answers.
 */
import * as http from "node:http"
import * as net from "node:net"

/** Writes `request` as-is and reads everything until the listener closes the socket. */
export const rawExchange = (listenerUrl: string, request: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const url = new URL(listenerUrl)
    const socket = net.connect(Number(url.port), url.hostname)
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
    socket.on("error", reject)
    socket.write(request)
  })

export interface ListenerResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
}

/**
 * `method target` with the bearer and `headers`; when `bodyBytes` is given the body is streamed
 * in 64 KiB chunks (chunked encoding unless a content-length is given) and writing stops as soon
 * as the listener answers. With `declaredLength` only the headers are sent.
 */
export const streamedRequest = (
  listenerUrl: string,
  method: string,
  target: string,
  options: {
    readonly bearer: string
    readonly headers?: Record<string, string>
    readonly bodyBytes?: number
    readonly declaredLength?: number
  }
): Promise<ListenerResponse> =>
  new Promise((resolve, reject) => {
    const url = new URL(listenerUrl)
    let sent = 0
    let answered = false
    const request = http.request({
      host: url.hostname,
      port: Number(url.port),
      method,
      path: target,
      agent: false,
      headers: {
        authorization: `token ${options.bearer}`,
        ...(options.declaredLength === undefined ? {} : { "content-length": String(options.declaredLength) }),
        ...options.headers
      }
    }, (response) => {
      answered = true
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString("utf8") })
      )
      response.on("error", reject)
    })
    // Once answered, the listener may close while the client still writes: that is not a failure.
    request.on("error", (error) => {
      if (!answered) reject(error)
    })
    if (options.declaredLength !== undefined) return void request.flushHeaders()
    if (options.bodyBytes === undefined) return void request.end()
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    const total = options.bodyBytes
    const writeMore = () => {
      while (!answered && sent < total) {
        const part = chunk.subarray(0, Math.min(chunk.length, total - sent))
        sent += part.length
        if (!request.write(part)) return void request.once("drain", writeMore)
      }
      if (!answered) request.end()
    }
    writeMore()
  })

export interface CountedResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  /** Body bytes received (counted, never kept). */
  readonly bytes: number
  /** Whether the body arrived whole (false: the connection was cut first). */
  readonly complete: boolean
}

/** `GET target` with the bearer, counting the body as it streams so a large answer costs no memory. */
export const countedGet = (listenerUrl: string, target: string, bearer: string): Promise<CountedResponse> =>
  new Promise((resolve, reject) => {
    const url = new URL(listenerUrl)
    const request = http.get({
      host: url.hostname,
      port: Number(url.port),
      path: target,
      agent: false,
      headers: { authorization: `token ${bearer}` }
    }, (response) => {
      let bytes = 0
      response.on("data", (chunk: Buffer) => void (bytes += chunk.length))
      // A cut connection is an outcome here, not a failure of the client.
      response.on("error", () => {})
      response.on("close", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, bytes, complete: response.complete })
      )
    })
    request.on("error", reject)
  })

/** `POST target` whose body is sent in two parts: `finish` sends the rest and gives the answer. */
export const splitRequest = (listenerUrl: string, target: string, bearer: string) => {
  const url = new URL(listenerUrl)
  const body = Buffer.from("0032want 0000000000000000000000000000000000000000\n00000009done\n")
  let answer: Promise<{ readonly status: number; readonly text: string }> | undefined
  const request = http.request({
    host: url.hostname,
    port: Number(url.port),
    method: "POST",
    path: target,
    agent: false,
    headers: {
      authorization: `Basic ${Buffer.from(`x-access-token:${bearer}`).toString("base64")}`,
      "content-type": "application/x-git-upload-pack-request",
      "content-length": String(body.length)
    }
  })
  answer = new Promise((resolve, reject) => {
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
    })
    request.on("error", reject)
  })
  request.write(body.subarray(0, 10))
  return {
    finish: () => {
      request.end(body.subarray(10))
      return answer!
    }
  }
}
