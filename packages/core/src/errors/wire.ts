import { HttpApiSchema } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { CurrentRequestId, Meta } from "../schema/envelope.js"
import { Limits } from "../schema/limits.js"
import { ErrorClasses } from "./classes.js"
import { type ErrorCode, ErrorCodes, ErrorStatus } from "./codes.js"
import { ErrorDetails, ErrorMessage } from "./detail.js"

/** Any of our wire errors, as handlers see it. */
export type ApiError = InstanceType<(typeof ErrorClasses)[ErrorCode]>

const boundedMessage = (message: string, code: ErrorCode): string => {
  const trimmed = message.slice(0, Limits.errorMessage.max)
  return trimmed.length > 0 ? trimmed : code
}

/** What one code's error envelope looks like on the wire. */
export interface WireBody<C extends ErrorCode> {
  readonly error: {
    readonly code: C
    readonly message: string
    readonly details?: ReadonlyArray<{ readonly code: string; readonly path: string }>
  }
  readonly meta: { readonly requestId: string }
}

type ErrorClass = (typeof ErrorClasses)[ErrorCode]
type ErrorFields = { readonly _tag: string; readonly message: string; readonly details?: unknown }

/**
 * The error envelope `{ error: { code, message, details? }, meta: { requestId } }` of one code,
 * decoding to (and encoding from) its TaggedError class, annotated with the code's status so
 * HttpApi sends it with that status and OpenAPI documents it truthfully.
 */
const makeWireSchema = (code: ErrorCode) => {
  const cls: ErrorClass = ErrorClasses[code]
  const body = Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: ErrorMessage,
      details: Schema.optional(ErrorDetails)
    }),
    meta: Meta
  }).annotations({ identifier: `Error_${code}`, description: `${ErrorStatus[code]} ${code}` })
  const target = cls as unknown as Schema.Schema<ApiError, ErrorFields>
  return Schema.transformOrFail(body, target, {
    strict: false,
    decode: ({ error }) =>
      ParseResult.succeed({
        _tag: cls._tag,
        message: error.message,
        ...(error.details === undefined ? {} : { details: error.details })
      }),
    encode: (value: ErrorFields) =>
      Effect.map(CurrentRequestId, (requestId) => ({
        error: {
          code,
          message: boundedMessage(value.message, code),
          ...(Array.isArray(value.details) ? { details: value.details.slice(0, Limits.errorDetails) } : {})
        },
        meta: { requestId }
      }))
  }).annotations(HttpApiSchema.annotations({ status: ErrorStatus[code] }))
}

type WireSchemas = {
  readonly [C in ErrorCode]: Schema.Schema<InstanceType<(typeof ErrorClasses)[C]>, WireBody<C>>
}

/** The wire schema of every code. */
export const ErrorWire: WireSchemas = Object.fromEntries(
  ErrorCodes.map((code) => [code, makeWireSchema(code)])
) as unknown as WireSchemas

/** The code a failure instance carries (for logs and metrics). */
export const codeOf = (error: ApiError): ErrorCode => {
  for (const code of ErrorCodes) {
    if (error instanceof ErrorClasses[code]) return code
  }
  return "INTERNAL_ERROR"
}
