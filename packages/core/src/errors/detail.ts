import { Schema } from "effect"
import { DetailCodes } from "../schema/detailCodes.js"
import { Limits } from "../schema/limits.js"

/** One `error.details[]` item: what is wrong (`code`) and where (`path`, a JSON Pointer). */
export const ErrorDetail = Schema.Struct({
  code: Schema.Literal(...DetailCodes),
  path: Schema.String.pipe(Schema.maxLength(Limits.errorDetailPath))
}).annotations({ identifier: "ErrorDetail" })
export type ErrorDetail = typeof ErrorDetail.Type

export const ErrorDetails = Schema.Array(ErrorDetail).pipe(Schema.maxItems(Limits.errorDetails))

export const ErrorMessage = Schema.String.pipe(
  Schema.minLength(Limits.errorMessage.min),
  Schema.maxLength(Limits.errorMessage.max)
)
