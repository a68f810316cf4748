/**
 * HTTP over the credential service's private Unix socket (SPEC 4.8), for the Repo Driver:
 * JSON in and out, bodies at most 16 KiB, every call bounded in time.
 */
import { Data, Effect } from "effect"
import * as http from "node:http"
import { Limits } from "../../schema/limits.js"

export class ControlUnavailable extends Data.TaggedError("ControlUnavailable")<{ readonly reason: string }> {}

export interface ControlResponse {
  readonly status: number
  readonly body: unknown
}

const TIMEOUT_MS = 30_000

export const controlRequest = (
  socketPath: string,
  method: "GET" | "POST",
  target: string,
  options: { readonly headers?: Record<string, string>; readonly body?: unknown } = {}
): Effect.Effect<ControlResponse, ControlUnavailable> =>
  Effect.async<ControlResponse, ControlUnavailable>((resume) => {
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body))
    const headers: Record<string, string> = { ...options.headers }
    if (payload !== undefined) {
      headers["content-type"] = "application/json"
      headers["content-length"] = String(payload.length)
    }
    const request = http.request({ socketPath, method, path: target, headers, timeout: TIMEOUT_MS }, (response) => {
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > Limits.controlInterfaceBodyBytes) request.destroy(new Error("response too large"))
        else chunks.push(chunk)
      })
      response.on("end", () => {
        try {
          const text = Buffer.concat(chunks).toString("utf8")
          resume(Effect.succeed({ status: response.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) }))
        } catch {
          resume(Effect.fail(new ControlUnavailable({ reason: "the credential service answered with invalid JSON" })))
        }
      })
    })
    request.on("timeout", () => request.destroy(new Error("timed out")))
    request.on("error", () => resume(Effect.fail(new ControlUnavailable({ reason: "the credential service is not reachable" }))))
    if (payload !== undefined) request.write(payload)
    request.end()
    return Effect.sync(() => request.destroy())
  })
