import { type HttpApi, HttpApiBuilder, type HttpApiGroup, type HttpApp, HttpMiddleware, HttpRouter } from "@effect/platform"
import { Effect, Layer } from "effect"
import { type FrameworkError, handleErrors } from "./errorHandling.js"
import { BodyLimit, JsonBodyLive, WorkspaceWriteBodyLive } from "./jsonBody.js"
import { withRequestId } from "./requestId.js"
import { makeRouteTable } from "./routeTable.js"
import { makeHttpMetrics } from "../observability/metrics/httpMetrics.js"
import { spansExported } from "../observability/spans.js"

export interface PipelineOptions {
  /** Development serves the OpenAPI document at /openapi.json. */
  readonly development: boolean
  /** Body limit of create requests (SPEC 8 default 448 KiB). */
  readonly maxBodyBytes: number
}

const OPENAPI_PATH = "/openapi.json"

/**
 * Path parameters of SPEC 4 are up to 200 characters (`workId`, `userId`, `keyId`); a router
 * limit (its default is 100) would turn longer ones into a routing miss instead of reaching the
 * endpoint's own validation (TOO_LONG, INVALID_FORMAT). Node refuses a request line and headers
 * over 16 KiB before routing, so this lets any parameter the server can receive be routed.
 */
const MAX_PATH_PARAMETER = 16 * 1024

/**
 * The HTTP pipeline of DESIGN §4 around an HttpApi: request id, then the API-level error
 * handling, then routing, body checks and handlers. Generic in the API, so every server of
 * the service (and tests with extra groups) runs the very same pipeline. Needs an HttpServer.
 *
 * `dispatch`, when given, sees every request inside the request-id layer and before routing:
 * it may answer a request itself (the API's native admin hosts) or pass it on to the API.
 */
export const httpPipeline = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R, RG, EG>(
  api: HttpApi.HttpApi<Id, Groups, E, R>,
  groups: Layer.Layer<HttpApiGroup.HttpApiGroup.ToService<Id, Groups>, EG, RG>,
  options: PipelineOptions,
  dispatch?: <AE, AR>(app: HttpApp.Default<AE, AR>) => HttpApp.Default<AE, AR>
) => {
  const routes = makeRouteTable(api, options.development ? [{ method: "GET", path: OPENAPI_PATH }] : [], options)
  const openApi = options.development ? HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }) : Layer.empty
  // Outermost, so the counted status is the one sent (withRequestId's own fallback included).
  const withMetrics = makeHttpMetrics()
  const served = HttpApiBuilder.serve((app) => withMetrics(withRequestId(dispatch === undefined ? app : dispatch(app)))).pipe(
    Layer.provide(openApi),
    // withApiErrors declares every FrameworkError on the API, so HttpApi can encode them.
    Layer.provide(HttpApiBuilder.middleware(api as HttpApi.HttpApi<Id, Groups, E | FrameworkError, R>, handleErrors(routes))),
    Layer.provide(HttpApiBuilder.api(api)),
    Layer.provide(groups),
    Layer.provide(JsonBodyLive),
    Layer.provide(WorkspaceWriteBodyLive),
    Layer.provide(Layer.succeed(BodyLimit, { maxBytes: options.maxBodyBytes })),
    Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: MAX_PATH_PARAMETER }))
  )
  // The platform's request span (`http.server <method>`) only when spans are exported: it parses
  // the URL and copies every header into attributes on each request (observability/spans.ts).
  return Layer.unwrapEffect(
    Effect.map(spansExported, (exported) => exported ? served : HttpMiddleware.withTracerDisabledWhen(served, () => true))
  )
}
