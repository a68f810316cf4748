/** Request bodies read up to a limit, and the fixed answers of the listener. */
import type * as http from "node:http"
import { gunzipSync } from "node:zlib"

/** The whole body, or undefined past `max` bytes (the rest is not read). */
export const readLimited = (req: http.IncomingMessage, max: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0")
    if (declared > max) return resolve(undefined)
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > max) {
        req.removeAllListeners("data")
        req.pause()
        resolve(undefined)
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

/**
 * The upstream answer's whole body, or undefined past `max` bytes (the rest is not read). When
 * `signal` aborts, the stream itself is cancelled: aborting the fetch alone ends the read, but a
 * code host that sent headers and then went quiet for long (tens of seconds, measured) keeps its
 * connection open until the next request on it; cancelling the stream closes it at once.
 */
export const responseLimited = async (response: Response, max: number, signal?: AbortSignal): Promise<Buffer | undefined> => {
  if (response.body === null) return Buffer.alloc(0)
  if (Number(response.headers.get("content-length") ?? "0") > max) {
    await response.body.cancel()
    return undefined
  }
  const reader = response.body.getReader()
  const cancel = () => void reader.cancel().catch(() => undefined)
  signal?.addEventListener("abort", cancel, { once: true })
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      size += next.value.byteLength
      if (size > max) {
        await reader.cancel()
        return undefined
      }
      chunks.push(next.value)
    }
    return Buffer.concat(chunks)
  } finally {
    signal?.removeEventListener("abort", cancel)
  }
}

/** The body as Git sent it may be gzip-compressed; undefined when it does not inflate within `max`. */
export const inflated = (body: Buffer, encoding: string | undefined, max: number): Buffer | undefined => {
  if (encoding !== "gzip") return body
  try {
    return gunzipSync(body, { maxOutputLength: max })
  } catch {
    return undefined
  }
}

export type Surface = "git" | "api"

/** A fixed refusal: plain text for Git (shown to the user), JSON for the REST API. */
export const refuse = (res: http.ServerResponse, surface: Surface, status: number, message: string) => {
  // Already answered (an exchange cut off at its time limit): the answer stands.
  if (res.writableEnded) return
  if (res.headersSent) return void res.destroy()
  const headers: Record<string, string> = { connection: "close" }
  if (status === 401) headers["www-authenticate"] = "Basic realm=\"svc credential service\""
  if (surface === "api") {
    res.writeHead(status, { ...headers, "content-type": "application/json" })
    res.end(JSON.stringify({ message }))
  } else {
    res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8" })
    res.end(`${message}\n`)
  }
}
