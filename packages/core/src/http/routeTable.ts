import { HttpApi } from "@effect/platform"

/** Which methods each declared path accepts: tells a 405 from a 404 and fills `Allow`. */
export interface RouteTable {
  readonly allowedMethods: (pathname: string) => ReadonlyArray<string>
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

export const makeRouteTable = (
  api: HttpApi.HttpApi.Any,
  extraRoutes: ReadonlyArray<{ readonly method: string; readonly path: string }> = []
): RouteTable => {
  const routes: Array<{ readonly method: string; readonly pattern: RegExp }> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push({ method: endpoint.method, pattern: patternOf(endpoint.path) })
    }
  })
  for (const route of extraRoutes) routes.push({ method: route.method, pattern: patternOf(route.path) })
  return {
    allowedMethods: (pathname) => {
      const methods = new Set<string>()
      for (const route of routes) if (route.pattern.test(pathname)) methods.add(route.method)
      return [...methods].sort()
    }
  }
}
