/**
 * A request body checked with the contract's own schema before it is sent. A refused body
 * becomes the 400 the service would answer, with `details[]` (code and JSON Pointer, never the
 * value) made by the same `detailsFromIssues` the service uses, so a form shows each problem at
 * its pointer whichever side found it, and no refused value (a Secret's above all) is echoed.
 */
import { detailsFromIssues } from "@svc/core/errors"
import { Either, ParseResult, Schema } from "effect"
import { ApiFailure } from "../client.js"

export const checked = <A, I>(schema: Schema.Schema<A, I>, body: unknown): A => {
  const result = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(body)
  if (Either.isRight(result)) return result.right
  const details = detailsFromIssues(ParseResult.ArrayFormatter.formatErrorSync(result.left))
  throw new ApiFailure(400, "INVALID_REQUEST", "The request is not valid; see each field.", details)
}

export interface FieldProblem {
  readonly code: string
  readonly path: string
}

/** The `details[]` of a failure, when it has any. */
export const problemsOf = (error: unknown): ReadonlyArray<FieldProblem> =>
  error instanceof ApiFailure
    ? error.details.filter((d): d is FieldProblem =>
      typeof d === "object" && d !== null && typeof (d as FieldProblem).code === "string" && typeof (d as FieldProblem).path === "string")
    : []
