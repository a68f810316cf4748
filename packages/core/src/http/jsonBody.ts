import { HttpServerRequest } from "@effect/platform"
import { JsonBody, WorkspaceWriteBody } from "../api/middleware.js"
import { InvalidRequest, PayloadTooLarge, UnsupportedMediaType } from "../errors/index.js"
import { Limits } from "../schema/index.js"
import { Context, Effect, Layer } from "effect"
import { forbiddenInBody } from "./bodyStrings.js"
import { strictBodyText } from "./bodyText.js"
import { firstTooDeep } from "./jsonDepth.js"

/** The body size limit for requests that create or replace a resource (SPEC 8: 448 KiB). */
export class BodyLimit extends Context.Tag("@svc/api/BodyLimit")<BodyLimit, { readonly maxBytes: number }>() {}

const isJson = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase()
  return mediaType === "application/json"
}

/**
 * Whether the body carries a content coding (`gzip`, `br`, ...). None is supported: such a body
 * is not the JSON text it would be read as, so it is refused (RFC 9110 8.4.1: 415).
 */
const isEncoded = (contentEncoding: string | undefined): boolean =>
  contentEncoding !== undefined &&
  contentEncoding.split(",").some((coding) => {
    const name = coding.trim().toLowerCase()
    return name !== "" && name !== "identity"
  })

const tooLarge = (maxBytes: number) =>
  new PayloadTooLarge({ message: `The request body is larger than ${maxBytes} bytes.` })

const guard = (
  maxBytes: number
): Effect.Effect<void, UnsupportedMediaType | PayloadTooLarge | InvalidRequest, HttpServerRequest.HttpServerRequest> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!isJson(request.headers["content-type"])) {
        return yield* new UnsupportedMediaType({ message: "The request body must be application/json." })
      }
      if (isEncoded(request.headers["content-encoding"])) {
        return yield* new UnsupportedMediaType({ message: "The request body must not be content-encoded." })
      }
      const declared = request.headers["content-length"]
      if (declared !== undefined && Number(declared) > maxBytes) {
        return yield* tooLarge(maxBytes)
      }
      // Strictly decoded (invalid UTF-8 is refused, not replaced) and cached for HttpApi's own decoding.
      const text = yield* strictBodyText(request, maxBytes).pipe(
        Effect.catchTags({
          BodyTooLarge: () => Effect.fail(tooLarge(maxBytes)),
          BodyUnreadable: () => Effect.fail(new InvalidRequest({ message: "The request body could not be read." })),
          BodyNotUtf8: () =>
            Effect.fail(
              new InvalidRequest({
                message: "The request body is not valid UTF-8.",
                details: [{ code: "INVALID_FORMAT", path: "" }]
              })
            )
        })
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
      const forbidden = forbiddenInBody(body)
      if (forbidden.length > 0) {
        return yield* new InvalidRequest({
          message: "The request body holds a NUL character or a reserved name.",
          details: forbidden
        })
      }
    })

export const JsonBodyLive = Layer.effect(
  JsonBody,
  Effect.map(BodyLimit, ({ maxBytes }) => guard(maxBytes))
)

export const WorkspaceWriteBodyLive = Layer.succeed(WorkspaceWriteBody, guard(Limits.workspaceWriteBodyBytes))
