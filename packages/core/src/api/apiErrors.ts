import { HttpApi } from "@effect/platform"
import { ErrorWire } from "../errors/index.js"

/**
 * The errors any route can answer with, whatever its handler does: routing misses, request
 * decoding, body checks, defects and a lost database. Declared once on the API so HttpApi
 * encodes them (and OpenAPI documents them) with the SPEC 7.1 envelope.
 */
export const withApiErrors = <Id extends string, E>(api: HttpApi.HttpApi<Id, never, E, never>) =>
  api
    .addError(ErrorWire.INVALID_REQUEST)
    .addError(ErrorWire.NOT_FOUND)
    .addError(ErrorWire.METHOD_NOT_ALLOWED)
    .addError(ErrorWire.PAYLOAD_TOO_LARGE)
    .addError(ErrorWire.UNSUPPORTED_MEDIA_TYPE)
    .addError(ErrorWire.INTERNAL_ERROR)
    .addError(ErrorWire.DEPENDENCY_UNAVAILABLE)
