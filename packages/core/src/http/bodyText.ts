import { FileSystem, HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { Data, Effect, Option } from "effect"
import { Readable } from "node:stream"

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
const textCache = (request: HttpServerRequest.HttpServerRequest) =>
  request as unknown as { textEffect?: Effect.Effect<string> }

const cacheText = (request: HttpServerRequest.HttpServerRequest, text: string): void => {
  textCache(request).textEffect = Effect.succeed(text)
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * The body's bytes from Node's request stream, at most `maxBytes`. Past the limit the read stops
 * listening but leaves the stream alone: Node discards the rest once the response is sent. The
 * platform's own bounded read destroys the stream there, which closes the socket before the 413
 * can be written: a chunked body over the limit got no answer at all.
 */
const readBounded = (incoming: Readable, maxBytes: number): Effect.Effect<Uint8Array, BodyTooLarge | BodyUnreadable> =>
  Effect.async((resume) => {
    // Read by somebody else already: what it held is gone.
    if (incoming.readableEnded || incoming.destroyed) return resume(Effect.fail(new BodyUnreadable()))
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onBroken)
      incoming.off("close", onBroken)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBytes) return void chunks.push(chunk)
      stop()
      resume(Effect.fail(new BodyTooLarge()))
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks, size)))
    }
    // An error, or the connection closed before the body ended.
    const onBroken = () => {
      stop()
      resume(Effect.fail(new BodyUnreadable()))
    }
    incoming.on("data", onData)
    incoming.on("end", onEnd)
    incoming.on("error", onBroken)
    incoming.on("close", onBroken)
    return Effect.sync(stop)
  })

const isNodeStream = (source: unknown): source is Readable => source instanceof Readable

/** The request body's bytes, at most `maxBytes`: from Node's stream when served by Node. */
const bodyBytes = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  isNodeStream(request.source)
    ? readBounded(request.source, maxBytes)
    : request.arrayBuffer.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(maxBytes))),
      Effect.map((buffer) => new Uint8Array(buffer)),
      Effect.mapError((error) => (isMaxBytesExceeded(error) ? new BodyTooLarge() : new BodyUnreadable()))
    )

/** The request body as strictly decoded UTF-8 text, at most `maxBytes` bytes long. */
export const strictBodyText = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<string, BodyTooLarge | BodyUnreadable | BodyNotUtf8> =>
  bodyBytes(request, maxBytes).pipe(
    Effect.flatMap((bytes) =>
      Effect.try({ try: () => strict.decode(bytes), catch: () => new BodyNotUtf8() })
    ),
    Effect.tap((text) => Effect.sync(() => cacheText(request, text)))
  )

/**
 * The body as text for a reader after the JSON body guard: the text the guard cached, or (a route
 * without that guard) the body read here, strictly and at most `maxBytes`.
 */
export const bodyTextOnce = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<string, BodyTooLarge | BodyUnreadable | BodyNotUtf8> => {
  return textCache(request).textEffect ?? strictBodyText(request, maxBytes)
}
