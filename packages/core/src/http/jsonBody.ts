import { FileSystem, HttpIncomingMessage, HttpServerRequest } from "@effect/platform"
import { JsonBody, WorkspaceWriteBody } from "../api/middleware.js"
import { InvalidRequest, PayloadTooLarge, UnsupportedMediaType } from "../errors/index.js"
import { Limits } from "../schema/index.js"
import { Context, Effect, Layer, Option } from "effect"
import { firstTooDeep } from "./jsonDepth.js"

/** The body size limit for requests that create or replace a resource (SPEC 8: 448 KiB). */
export class BodyLimit extends Context.Tag("@svc/api/BodyLimit")<BodyLimit, { readonly maxBytes: number }>() {}

const isJson = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase()
  return mediaType === "application/json"
}

const tooLarge = (maxBytes: number) =>
  new PayloadTooLarge({ message: `The request body is larger than ${maxBytes} bytes.` })

const isMaxBytesExceeded = (error: unknown): boolean =>
  typeof error === "object" && error !== null && String((error as { cause?: unknown }).cause).includes("maxBytes exceeded")

const guard = (
  maxBytes: number
): Effect.Effect<void, UnsupportedMediaType | PayloadTooLarge | InvalidRequest, HttpServerRequest.HttpServerRequest> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!isJson(request.headers["content-type"])) {
        return yield* new UnsupportedMediaType({ message: "The request body must be application/json." })
      }
      const declared = request.headers["content-length"]
      if (declared !== undefined && Number(declared) > maxBytes) {
        return yield* tooLarge(maxBytes)
      }
      // Reading caches the text for HttpApi's own decoding; the limit stops an endless body.
      const text = yield* request.text.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(maxBytes))),
        Effect.mapError((error): PayloadTooLarge | InvalidRequest =>
          isMaxBytesExceeded(error)
            ? tooLarge(maxBytes)
            : new InvalidRequest({ message: "The request body could not be read." })
        )
      )
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return yield* new InvalidRequest({
          message: "The request body is not valid JSON.",
          details: [{ code: "INVALID_FORMAT", path: "" }]
        })
      }
      const deep = firstTooDeep(body, Limits.jsonDepth)
      if (deep !== undefined) {
        return yield* new InvalidRequest({
          message: `The request body is nested deeper than ${Limits.jsonDepth} levels.`,
          details: [{ code: "TOO_DEEP", path: deep }]
        })
      }
    })

export const JsonBodyLive = Layer.effect(
  JsonBody,
  Effect.map(BodyLimit, ({ maxBytes }) => guard(maxBytes))
)

export const WorkspaceWriteBodyLive = Layer.succeed(WorkspaceWriteBody, guard(Limits.workspaceWriteBodyBytes))
