/**
 * The console at /console/ (SPEC 1.7, DESIGN §16), in the pipeline's `dispatch` slot: its
 * requests never reach the HttpApi router. `/console` redirects to `/console/`; a file of the
 * build is served with its cache policy; a console page gets index.html under the strict CSP;
 * anything else under /console/ is a 404 in the envelope; not built, a 503 that says so.
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { DependencyUnavailable, MethodNotAllowed, NotFound } from "@svc/core/errors"
import { Effect } from "effect"
import { refusal } from "../dispatchRefusal.js"
import { type ConsoleAsset, type ConsoleAssets, defaultConsoleDir, loadConsoleAssets } from "./assets.js"
import { htmlHeaders, immutableAssetHeaders, plainAssetHeaders } from "./headers.js"
import { isConsolePage, isImmutableAsset } from "./routes.js"

const PREFIX = "/console/"

const respond = (asset: ConsoleAsset, headers: Record<string, string>, method: string) =>
  HttpServerResponse.uint8Array(method === "HEAD" ? new Uint8Array() : asset.body, {
    status: 200,
    contentType: asset.contentType,
    headers: method === "HEAD" ? { ...headers, "content-length": String(asset.body.length) } : headers
  })

/** What the console needs to know of this server that no API endpoint says (native admin hosts). */
export interface ConsoleSettings {
  readonly nativeAdmin: { readonly agentHostSuffix: string } | null
}

const SETTINGS = "settings.json"

const serve = (assets: ConsoleAssets | undefined, settings: ConsoleSettings, request: HttpServerRequest.HttpServerRequest, pathname: string) => {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return refusal(new MethodNotAllowed({ message: "The console only answers GET and HEAD." }))
  }
  if (assets === undefined) {
    return refusal(new DependencyUnavailable({ message: "The console is not built on this server; run `npm run build`." }))
  }
  const relative = pathname.slice(PREFIX.length)
  if (relative === SETTINGS) return Effect.succeed(HttpServerResponse.unsafeJson(settings, { headers: plainAssetHeaders }))
  const file = relative === "index.html" ? undefined : assets.files.get(relative)
  if (file !== undefined) {
    return Effect.succeed(respond(file, isImmutableAsset(relative) ? immutableAssetHeaders : plainAssetHeaders, request.method))
  }
  if (isConsolePage(relative)) return Effect.succeed(respond(assets.index, htmlHeaders, request.method))
  return refusal(new NotFound({ message: "No console page or file at this path." }))
}

/** The path of a request URL; the query string is the page's business. */
const pathOf = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * The middleware; the build is read once, here, from `dir` (default: the console package's
 * dist directory).
 */
export const consoleDispatch = (dir: string = defaultConsoleDir(), settings: ConsoleSettings = { nativeAdmin: null }) =>
  Effect.map(loadConsoleAssets(dir), (assets) =>
    <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const pathname = pathOf(request.url)
        if (pathname === "/console") {
          const query = request.url.slice(pathname.length)
          return Effect.succeed(HttpServerResponse.redirect(`${PREFIX}${query}`, { status: 301, headers: { "cache-control": "no-store" } }))
        }
        return pathname.startsWith(PREFIX) ? serve(assets, settings, request, pathname) : app
      }))
