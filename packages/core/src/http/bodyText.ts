import { FileSystem, HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { Data, Effect, Option } from "effect"

/** The body is longer than the limit (the read stopped there). */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge") {}
/** The body could not be read (the client went away, the stream broke). */
export class BodyUnreadable extends Data.TaggedError("BodyUnreadable") {}
/** The body's bytes are not UTF-8 (RFC 8259 §8.1 requires it of JSON). */
export class BodyNotUtf8 extends Data.TaggedError("BodyNotUtf8") {}

const isMaxBytesExceeded = (error: unknown): boolean =>
  typeof error === "object" && error !== null && String((error as { cause?: unknown }).cause).includes("maxBytes exceeded")

/**
 * The platform reads a body as text with a lenient decoder that turns invalid bytes into
 * U+FFFD, which would then be stored as if the client had sent it. We read the bytes and decode
 * them strictly instead. HttpApi decodes the payload later from `request.text`, which the
 * platform caches per request in the `textEffect` field of its incoming-message class
 * (@effect/platform 0.97 / platform-node 0.108; pinned by request-boundary.test.ts, where every
 * body route would fail if this stopped working): the strict text is put there, as the one
 * place that depends on that internal.
 */
const cacheText = (request: HttpServerRequest.HttpServerRequest, text: string): void => {
  ;(request as unknown as { textEffect?: Effect.Effect<string> }).textEffect = Effect.succeed(text)
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The request body as strictly decoded UTF-8 text, at most `maxBytes` bytes long. */
export const strictBodyText = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<string, BodyTooLarge | BodyUnreadable | BodyNotUtf8> =>
  request.arrayBuffer.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(maxBytes))),
    Effect.mapError((error) => (isMaxBytesExceeded(error) ? new BodyTooLarge() : new BodyUnreadable())),
    Effect.flatMap((bytes) =>
      Effect.try({ try: () => strict.decode(bytes), catch: () => new BodyNotUtf8() })
    ),
    Effect.tap((text) => Effect.sync(() => cacheText(request, text)))
  )
