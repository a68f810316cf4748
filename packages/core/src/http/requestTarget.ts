import type { ErrorDetail } from "../errors/detail.js"
import { jsonPointer } from "../errors/index.js"
import { Limits } from "../schema/index.js"
import { hasNul } from "./bodyStrings.js"
import type { RouteTable } from "./routeTable.js"

/** The text a percent-encoded URL part stands for, or undefined when its escapes are malformed. */
const decoded = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

const unreadable = (raw: string): boolean => {
  const text = decoded(raw)
  return text === undefined || hasNul(text)
}

/** What the request target check found: nothing, a routing miss, or bad parameters. */
export type TargetProblem =
  | { readonly _tag: "RouteMiss" }
  | { readonly _tag: "BadParameters"; readonly details: ReadonlyArray<ErrorDetail> }

const queryProblems = (query: string): Array<ErrorDetail> => {
  const details: Array<ErrorDetail> = []
  for (const part of query.split("&")) {
    if (part === "") continue
    const equals = part.indexOf("=")
    const rawName = (equals < 0 ? part : part.slice(0, equals)).replace(/\+/g, " ")
    const rawValue = (equals < 0 ? "" : part.slice(equals + 1)).replace(/\+/g, " ")
    if (unreadable(rawName) || unreadable(rawValue)) {
      details.push({ code: "INVALID_FORMAT", path: jsonPointer([decoded(rawName) ?? rawName]) })
    }
  }
  return details
}

/**
 * Path and query parameters before routing. The router cannot match a path segment whose
 * percent-escapes are malformed (`%`, `%ZZ`, `%ff`), which made the 405 table, built from the
 * same routes, contradict it; and a NUL reaches the database as text it refuses, which looked
 * like an outage. Either in a segment that a route of this method takes as a parameter is that
 * parameter's INVALID_FORMAT, as any malformed parameter is; in a segment no route of this
 * method takes, a routing miss (404, or 405 naming the methods the path serves). Query
 * parameters of a routed path are held to the same rule.
 */
export const targetProblem = (routes: RouteTable, method: string, url: string): TargetProblem | undefined => {
  const queryAt = url.indexOf("?")
  const path = queryAt < 0 ? url : url.slice(0, queryAt)
  const query = queryAt < 0 ? "" : url.slice(queryAt + 1)
  const segments = path.split("/")
  const bad = segments.flatMap((segment, index) => (unreadable(segment) ? [index] : []))
  if (bad.length > 0) {
    const shape = routes.shapesOf(segments).find((candidate) => candidate.method === method)
    if (shape === undefined) return { _tag: "RouteMiss" }
    const details = bad.map((index) => ({ code: "INVALID_FORMAT" as const, path: jsonPointer([shape.parameters[index] ?? ""]) }))
    return { _tag: "BadParameters", details: details.slice(0, Limits.errorDetails) }
  }
  if (query === "") return undefined
  // Whether the path is routed is asked only of a query with problems: it tests every route's
  // pattern, which every list page (a query string) would otherwise pay for.
  const details = queryProblems(query)
  if (details.length === 0 || !routes.allowedMethods(path).includes(method)) return undefined
  return { _tag: "BadParameters", details: details.slice(0, Limits.errorDetails) }
}
