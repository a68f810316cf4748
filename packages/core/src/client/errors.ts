/**
 * Error responses as the tagged errors of `@svc/core/errors`. HttpApiClient already decodes
 * every error an endpoint declares (per status) to its class; a response whose status the
 * endpoint does not declare arrives as a `ResponseError`. When its body is our error envelope
 * with a known code, it becomes that code's class, so callers see one kind of error whatever
 * the contract happens to list.
 */
import { HttpClientError } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { type ErrorCode, ErrorStatus, ErrorWire } from "../errors/index.js"

const CodeOnly = Schema.parseJson(Schema.Struct({ error: Schema.Struct({ code: Schema.String }) }))
const decodeCode = Schema.decodeUnknownOption(CodeOnly)

const isCode = (code: string): code is ErrorCode => Object.hasOwn(ErrorStatus, code)

const toTagged = (text: string): Effect.Effect<Option.Option<unknown>> => {
  const envelope = decodeCode(text)
  if (Option.isNone(envelope) || !isCode(envelope.value.error.code)) return Effect.succeedNone
  const wire: Schema.Schema<unknown, unknown> = ErrorWire[envelope.value.error.code] as Schema.Schema<unknown, unknown>
  return Schema.decodeUnknown(Schema.parseJson(wire))(text).pipe(Effect.option)
}

/** For `HttpApiClient.make`'s `transformResponse`. */
export const undeclaredErrorsAsTagged = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, unknown, R> =>
  Effect.catchIf(
    effect,
    (error): error is E & HttpClientError.ResponseError =>
      HttpClientError.isHttpClientError(error) && error._tag === "ResponseError" && error.response.status >= 400,
    (error) =>
      error.response.text.pipe(
        Effect.option,
        Effect.flatMap((text) => Option.isSome(text) ? toTagged(text.value) : Effect.succeedNone),
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(error), onSome: Effect.fail }))
      )
  )
