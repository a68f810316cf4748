/**
 * A refusal in the SPEC 7.1 envelope, for middlewares in the pipeline's `dispatch` slot (native
 * admin hosts, the console) that answer before the HttpApi router. The request-id layer's
 * pre-response handler only runs for responses of the API below it, so `x-request-id` is set here.
 */
import { HttpServerResponse } from "@effect/platform"
import { type ApiError, codeOf, ErrorStatus } from "@svc/core/errors"
import { CurrentRequestId } from "@svc/core/schema"
import { Effect } from "effect"

export const refusal = (error: ApiError) =>
  Effect.map(CurrentRequestId, (requestId) =>
    HttpServerResponse.unsafeJson(
      { error: { code: codeOf(error), message: error.message }, meta: { requestId } },
      { status: ErrorStatus[codeOf(error)], headers: { "x-request-id": requestId } }
    ))
