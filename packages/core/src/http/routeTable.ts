import { HttpApi } from "@effect/platform"
import { Context } from "effect"
import { DevelopmentOnly } from "../api/developmentOnly.js"

/** Which methods each declared path accepts: tells a 405 from a 404 and fills `Allow`. */
export interface RouteTable {
  readonly allowedMethods: (pathname: string) => ReadonlyArray<string>
  /**
   * The routes whose shape fits these raw (still percent-encoded) path segments, whatever the
   * segments' contents: for each, its method and the parameter name of every segment (undefined
   * for a literal segment). Lets the request-target check name the parameter a bad segment
   * would have become.
   */
  readonly shapesOf: (segments: ReadonlyArray<string>) => ReadonlyArray<RouteShape>
  /**
   * Whether this request names an endpoint of the contract that this server does not serve
   * (`DevelopmentOnly` ones outside development): answered as a routing miss before any
   * middleware runs, so such a path looks like any path that does not exist.
   */
  readonly unserved: (method: string, url: string) => boolean
}

export interface RouteShape {
  readonly method: string
  readonly parameters: ReadonlyArray<string | undefined>
}

interface Route {
  readonly method: string
  readonly pattern: RegExp
  readonly segments: ReadonlyArray<string>
}

const patternOf = (path: string): RegExp =>
  new RegExp(
    "^" +
      path
        .split("/")
        .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/") +
      "/?$"
  )

const fits = (route: Route, segments: ReadonlyArray<string>): boolean =>
  route.segments.length === segments.length &&
  route.segments.every((template, index) => template.startsWith(":") ? segments[index] !== "" : template === segments[index])

export const makeRouteTable = (
  api: HttpApi.HttpApi.Any,
  extraRoutes: ReadonlyArray<{ readonly method: string; readonly path: string }> = [],
  options: { readonly development: boolean } = { development: true }
): RouteTable => {
  const routes: Array<Route> = []
  const add = (method: string, path: string) =>
    routes.push({ method, pattern: patternOf(path), segments: path.split("/") })
  // The router matches paths whatever their case; so does this check.
  const unserved: Array<{ readonly method: string; readonly pattern: RegExp }> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      if (!options.development && Context.getOption(endpoint.annotations, DevelopmentOnly)._tag === "Some") {
        unserved.push({ method: endpoint.method, pattern: new RegExp(patternOf(endpoint.path).source, "i") })
      } else add(endpoint.method, endpoint.path)
    }
  })
  for (const route of extraRoutes) add(route.method, route.path)
  return {
    allowedMethods: (pathname) => {
      const methods = new Set<string>()
      for (const route of routes) if (route.pattern.test(pathname)) methods.add(route.method)
      return [...methods].sort()
    },
    shapesOf: (segments) => {
      // A trailing slash routes like none (the patterns above allow it).
      const trimmed = segments.length > 2 && segments[segments.length - 1] === "" ? segments.slice(0, -1) : segments
      return routes
        .filter((route) => fits(route, trimmed))
        .map((route) => ({
          method: route.method,
          parameters: route.segments.map((template) => (template.startsWith(":") ? template.slice(1) : undefined))
        }))
    },
    unserved: (method, url) => {
      // Cheap first: most requests' method has no unserved route at all.
      if (!unserved.some((route) => route.method === method)) return false
      const pathname = new URL(url, "http://localhost").pathname
      let decoded = pathname
      try {
        decoded = decodeURIComponent(pathname)
      } catch {
        // A malformed escape: the request-target check answers it.
      }
      return unserved.some((route) => route.method === method && (route.pattern.test(pathname) || route.pattern.test(decoded)))
    }
  }
}
