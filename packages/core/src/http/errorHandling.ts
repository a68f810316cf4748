import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpServerError } from "@effect/platform"
import { causeIsDatabaseUnavailable } from "../db/unavailable.js"
import {
  DependencyUnavailable,
  ErrorClasses,
  InternalError,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  detailsFromIssues
} from "../errors/index.js"
import { Cause, Chunk, Effect } from "effect"
import { targetProblem } from "./requestTarget.js"
import type { RouteTable } from "./routeTable.js"

const INTERNAL_MESSAGE = "The server could not complete the request."
const NO_RESOURCE = "No resource exists at this path."
const UNAVAILABLE_MESSAGE = "A dependency of the service is unavailable; retry later."

const isRouteNotFound = (error: unknown): error is HttpServerError.RouteNotFound =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "RouteNotFound"

const isDecodeError = (error: unknown): error is HttpApiDecodeError =>
  error instanceof HttpApiDecodeError

/** 404 for a path we do not serve, 405 with `Allow` for a path served with other methods. */
const routeMiss = (routes: RouteTable) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const pathname = new URL(request.url, "http://localhost").pathname
    const allowed = routes.allowedMethods(pathname)
    // The router refused a path the table says this method serves: they disagree about what
    // matches. A 405 naming the refused method would contradict itself; say there is nothing.
    if (allowed.length === 0 || allowed.includes(request.method)) {
      if (allowed.length > 0) {
        yield* Effect.logWarning("router and route table disagree").pipe(
          Effect.annotateLogs({ method: request.method, path: pathname })
        )
      }
      return yield* new NotFound({ message: NO_RESOURCE })
    }
    const allow = allowed.join(", ")
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "allow", allow))
    )
    return yield* new MethodNotAllowed({ message: `Method ${request.method} is not allowed here; use ${allow}.` })
  })

/**
 * An HTTP/1.1 request without `Host` (RFC 9112 3.2: 400). Node's own check answered it with a
 * bare 400, so the server leaves it to us (`requireHostHeader: false`, clientError.ts).
 */
const lacksHost = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const source: unknown = request.source
  const version = typeof source === "object" && source !== null && "httpVersion" in source ? source.httpVersion : undefined
  return version === "1.1" && request.headers["host"] === undefined
}

/** A missing Host, then malformed or NUL-carrying path and query parameters, before routing (requestTarget.ts). */
const checkTarget = (routes: RouteTable) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (lacksHost(request)) {
      return yield* new InvalidRequest({
        message: "An HTTP/1.1 request must carry a Host header.",
        details: [{ code: "REQUIRED", path: "/headers/host" }]
      })
    }
    if (routes.unserved(request.method, request.url)) {
      return yield* new NotFound({ message: NO_RESOURCE })
    }
    const problem = targetProblem(routes, request.method, request.url)
    if (problem === undefined) return
    if (problem._tag === "RouteMiss") return yield* routeMiss(routes)
    return yield* new InvalidRequest({
      message: "A path or query parameter holds a malformed escape or a NUL character.",
      details: [...problem.details]
    })
  })

/** What the API-level middleware may fail with, beyond what handlers declare. */
export type FrameworkError = NotFound | MethodNotAllowed | InvalidRequest | DependencyUnavailable | InternalError

/**
 * The API-level middleware: turns what the framework raises into our declared errors, so that
 * HttpApi encodes them in the SPEC 7.1 envelope with the right status.
 * - an HTTP/1.1 request without `Host`, and path and query parameters that cannot be read
 *   (malformed escapes, NUL): 400 INVALID_REQUEST, checked before routing;
 * - routing misses: 404 NOT_FOUND or 405 METHOD_NOT_ALLOWED;
 * - request decoding failures: 400 INVALID_REQUEST with `details`;
 * - a lost database anywhere: 503 DEPENDENCY_UNAVAILABLE;
 * - a defect that is a ready response (a middleware answering itself): sent as it is;
 * - any other defect: 500 INTERNAL_ERROR with a fixed message, the cause logged (with the
 *   request id, from the log annotations) and never sent.
 */
export const handleErrors =
  (routes: RouteTable) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E | FrameworkError, R | HttpServerRequest.HttpServerRequest> =>
    Effect.catchAllCause(Effect.zipRight(checkTarget(routes), app), (cause): Effect.Effect<HttpServerResponse.HttpServerResponse, E | FrameworkError, HttpServerRequest.HttpServerRequest> => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      // A middleware that answers the request itself (an idempotent replay) ends it with a ready response.
      const ready = Cause.defects(cause).pipe(Chunk.findFirst(HttpServerResponse.isServerResponse))
      if (ready._tag === "Some") return Effect.succeed(ready.value)
      const failure = Cause.failureOption(cause)
      if (failure._tag === "Some" && !Cause.isDie(cause)) {
        const error: unknown = failure.value
        if (isRouteNotFound(error)) return routeMiss(routes)
        if (isDecodeError(error)) {
          return Effect.fail(
            new InvalidRequest({
              message: "The request does not match the expected schema.",
              details: detailsFromIssues(error.issues)
            })
          )
        }
        if (isDeclared(error)) return Effect.failCause(cause)
      }
      if (causeIsDatabaseUnavailable(cause)) {
        return Effect.zipRight(
          Effect.logWarning("database unavailable", cause),
          Effect.fail(new DependencyUnavailable({ message: UNAVAILABLE_MESSAGE }))
        )
      }
      return Effect.zipRight(
        Effect.logError("unhandled failure", cause),
        Effect.fail(new InternalError({ message: INTERNAL_MESSAGE }))
      )
    })

// Declared errors are our TaggedErrors; anything else that reaches here (a RequestError from a
// broken socket, an SqlError a repository forgot to map) is treated as a defect.
const declared = Object.values(ErrorClasses)
const isDeclared = (error: unknown): boolean => declared.some((cls) => error instanceof cls)
