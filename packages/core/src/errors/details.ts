import { Effect, ParseResult } from "effect"
import { type DetailCode, detailCodeOf } from "../schema/detailCodes.js"
import { Limits } from "../schema/limits.js"
import type { ErrorDetail } from "./detail.js"

/** The flattened issue both `ParseResult.ArrayFormatter` and HttpApi's decode error carry. */
export interface FlatIssue {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const escapeSegment = (segment: PropertyKey): string =>
  String(segment).replace(/~/g, "~0").replace(/\//g, "~1")

/**
 * RFC 6901 JSON Pointer of a path, cut back to whole segments so it never exceeds the SPEC 8
 * limit (a truncated segment would point somewhere else).
 */
export const jsonPointer = (path: ReadonlyArray<PropertyKey>): string => {
  let pointer = ""
  for (const segment of path) {
    const next = `${pointer}/${escapeSegment(segment)}`
    if (next.length > Limits.errorDetailPath) break
    pointer = next
  }
  return pointer
}

const codeOfIssue = (issue: FlatIssue): DetailCode => {
  switch (issue._tag) {
    case "Missing":
      return "REQUIRED"
    case "Unexpected":
      return "UNKNOWN_FIELD"
  }
  const annotated = detailCodeOf(issue.message)
  if (annotated !== undefined) return annotated
  return issue._tag === "Type" ? "INVALID_TYPE" : "INVALID_VALUE"
}

// When several issues land on one path (an optional field fails both its schema and
// `undefined`), the most specific one describes the problem.
const specificity: Record<DetailCode, number> = {
  REQUIRED: 7,
  UNKNOWN_FIELD: 6,
  TOO_DEEP: 5,
  TOO_LONG: 4,
  INVALID_FORMAT: 3,
  INVALID_VALUE: 2,
  INVALID_TYPE: 1
}

/** `details[]` for a list of issues: one per path, in order, at most 32 (SPEC 7.1). */
export const detailsFromIssues = (issues: ReadonlyArray<FlatIssue>): Array<ErrorDetail> => {
  const byPath = new Map<string, DetailCode>()
  for (const issue of issues) {
    const path = jsonPointer(issue.path)
    const code = codeOfIssue(issue)
    const current = byPath.get(path)
    if (current === undefined || specificity[code] > specificity[current]) byPath.set(path, code)
  }
  // An issue on a container is explained by the issues inside it (an optional object that
  // fails inside also fails `undefined` at its own path): keep the deepest.
  const paths = Array.from(byPath.keys())
  const explained = (path: string) => paths.some((other) => other !== path && other.startsWith(`${path}/`))
  return Array.from(byPath, ([path, code]) => ({ code, path }))
    .filter((detail) => !explained(detail.path))
    .slice(0, Limits.errorDetails)
}

/** `details[]` for a Schema parse failure. */
export const detailsFromParseError = (error: ParseResult.ParseError): Effect.Effect<Array<ErrorDetail>> =>
  Effect.map(ParseResult.ArrayFormatter.formatError(error), detailsFromIssues)
