import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { ErrorStatus } from "../errors/index.js"
import { CurrentRequestId, RequestId } from "../schema/index.js"
import { Cause, Context, Effect, FiberRef, HashMap, LogLevel, Tracer } from "effect"
import { bareRequestSpan } from "../observability/spans.js"

/** The access log line: one per request, at Info, with its method, path, status and duration. */
const accessLog = (request: HttpServerRequest.HttpServerRequest, started: number, response: HttpServerResponse.HttpServerResponse) =>
  Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
    // Nothing to build when Info is not logged.
    LogLevel.greaterThan(minimum, LogLevel.Info)
      ? Effect.void
      : Effect.logInfo("http request").pipe(
          Effect.annotateLogs({
            method: request.method,
            path: new URL(request.url, "http://localhost").pathname,
            status: response.status,
            durationMs: Date.now() - started
          })
        ))

/**
 * The outermost layer of every request: a fresh `req_<uuidv4>`, provided to everything below
 * (envelopes read it), sent as `x-request-id`, and carried by every log line; every response
 * also says `Cache-Control: no-store`. A failure that
 * escapes everything below still gets the SPEC 7.1 envelope here, never a bare 500.
 *
 * The id is set on the request's fiber rather than provided around `app` (issue 11, CPU per
 * request): the server runs each request on a fiber of its own and this layer is its outermost,
 * so what it sets ends with the request and needs no restoring (three fiber-ref writes instead
 * of three scoped `locally`s).
 */
export const withRequestId = <E, R>(app: HttpApp.Default<E, R>) =>
  Effect.gen(function* () {
    const requestId = RequestId.make()
    // no-store on every response: most carry a credential (keys, session keys) or answer an
    // authenticated caller, and the few that do neither (health, the OpenAPI document) gain
    // nothing from a shared cache; one rule cannot be forgotten by a new route.
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        HttpServerResponse.setHeaders(response, { "x-request-id": requestId, "cache-control": "no-store" })
      )
    )
    const request = yield* HttpServerRequest.HttpServerRequest
    const bare = yield* bareRequestSpan(request.method)
    if (bare === undefined) {
      // Spans are exported, and the platform's request span is current: tag it, and the spans
      // below it, so traces and logs join up.
      yield* Effect.annotateCurrentSpan("svc.request_id", requestId)
      yield* FiberRef.update(FiberRef.currentTracerSpanAnnotations, HashMap.set<string, unknown>("svc.request_id", requestId))
    }
    yield* FiberRef.update(FiberRef.currentContext, (context) => {
      const identified = Context.add(context, CurrentRequestId, requestId)
      return bare === undefined ? identified : Context.add(identified, Tracer.ParentSpan, bare)
    })
    yield* FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("requestId", requestId))
    const started = Date.now()
    return yield* app.pipe(
      Effect.catchAllCause((cause) => {
        // HttpApi fails with a ready response for some outcomes: a client that went away gets
        // its 499 here. That is an answer (logged by the access log below), not a failure.
        const ready = [...Cause.failures(cause), ...Cause.defects(cause)].find(HttpServerResponse.isServerResponse)
        if (ready !== undefined) return Effect.succeed(ready)
        return Effect.zipRight(
          Cause.isInterruptedOnly(cause)
            ? Effect.void
            : Effect.logError("request failed outside the API error handling", cause),
          HttpServerResponse.json(
            {
              error: { code: "INTERNAL_ERROR", message: "The server could not complete the request." },
              meta: { requestId }
            },
            { status: ErrorStatus.INTERNAL_ERROR }
          ).pipe(Effect.orDie)
        )
      }),
      Effect.tap((response) => accessLog(request, started, response))
    )
  })
