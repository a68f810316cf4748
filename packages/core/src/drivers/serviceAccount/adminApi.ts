/**
 * One request to the model vendor's workspace Admin API (UPSTREAMS.md): bearer admin key read
 * from the mounted file at each use (a rotated file takes effect without a restart), JSON in
 * and out, redirects refused, answers capped at 4 MiB, a deadline per request. Every failure
 * becomes a fixed reason: upstream text never leaves this module.
 */
import { Effect, Option, ParseResult, Schema } from "effect"
import * as fs from "node:fs/promises"
import { ServiceAccountUpstreamError } from "./driver.js"

export const MAX_ANSWER_BYTES = 4 * 1024 * 1024

export interface AdminApiClient {
  /** The origin requests go to (the fixed vendor origin, or its development override). */
  readonly origin: string
  readonly apiKeyPath: string
  readonly timeoutMs: number
}

export interface AdminAnswer {
  readonly status: number
  readonly body: unknown
}

const fail = (reason: ServiceAccountUpstreamError["reason"], status?: number) =>
  new ServiceAccountUpstreamError(status === undefined ? { reason } : { reason, status })

const readAdminKey = (file: string) =>
  Effect.tryPromise({ try: () => fs.readFile(file, "utf8"), catch: () => fail("admin_key_unreadable") }).pipe(
    Effect.map((text) => text.trim()),
    Effect.filterOrFail((key) => key.length > 0, () => fail("admin_key_unreadable"))
  )

const readCapped = async (response: Response): Promise<string | undefined> => {
  if (response.body === null) return ""
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > MAX_ANSWER_BYTES) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString("utf8")
}

/** Sends one request; resolves with any HTTP answer, fails only when none usable arrived. */
export const adminRequest = (client: AdminApiClient, method: string, path: string, body?: unknown) =>
  Effect.gen(function* () {
    const key = yield* readAdminKey(client.apiKeyPath)
    const answer = yield* Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(`${client.origin}${path}`, {
          method,
          redirect: "manual",
          signal: AbortSignal.any([signal, AbortSignal.timeout(client.timeoutMs)]),
          headers: {
            authorization: `Bearer ${key}`,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" })
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const text = await readCapped(response)
        return { status: response.status, text }
      },
      catch: (cause) =>
        cause instanceof DOMException && cause.name === "TimeoutError" ? fail("timeout") : fail("unavailable")
    })
    if (answer.text === undefined) return yield* fail("invalid_response", answer.status)
    if (answer.status >= 300 && answer.status < 400) return yield* fail("invalid_response", answer.status)
    if (answer.status === 401 || answer.status === 403) return yield* fail("credentials_rejected", answer.status)
    if (answer.status === 429) return yield* fail("rate_limited", answer.status)
    if (answer.status >= 500) return yield* fail("unavailable", answer.status)
    let parsed: unknown = undefined
    try {
      parsed = answer.text === "" ? undefined : JSON.parse(answer.text)
    } catch {
      return yield* fail("invalid_response", answer.status)
    }
    return { status: answer.status, body: parsed } satisfies AdminAnswer
  })

const VendorError = Schema.Struct({ error: Schema.Struct({ code: Schema.String }) })

/** The vendor's error code of a 4xx answer, if it has the vendor's error shape. */
export const errorCode = (answer: AdminAnswer): Option.Option<string> =>
  Option.map(Schema.decodeUnknownOption(VendorError)(answer.body), (b) => b.error.code)

/** Decodes a 2xx answer with `schema`; anything else is an unexpected answer. */
export const expectOk = <A, I>(schema: Schema.Schema<A, I>) => (answer: AdminAnswer) =>
  answer.status >= 200 && answer.status < 300
    ? Schema.decodeUnknown(schema)(answer.body).pipe(
      Effect.mapError((_: ParseResult.ParseError) => fail("invalid_response", answer.status))
    )
    : Effect.fail(fail("invalid_response", answer.status))
