import { HttpApi, type HttpApiEndpoint } from "@effect/platform"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import { Authentication, HumanSession, SessionInspection } from "./middleware.js"

/**
 * The credentials of SPEC 5.1 as OpenAPI security schemes: the session cookie under its OpenAPI
 * name `svc.session_token` (SPEC 5.2) and the service API key header. The authentication
 * middleware is not an HttpApi security middleware (a key wins over a cookie and never falls
 * back to it), so the document would otherwise declare no credential at all.
 */
export const SESSION_SCHEME = "svc.session_token"
export const SERVICE_KEY_SCHEME = "serviceKey"

const SCHEMES = {
  [SESSION_SCHEME]: {
    type: "apiKey",
    in: "cookie",
    name: "svc.session_token",
    description:
      "The session cookie set by sign-in (HttpOnly, SameSite=Lax, Path=/). Production names it `__Secure-svc.session_token`; " +
      "with native admin on it is `svc_shared.session_token` (`__Secure-svc_shared.session_token`). " +
      "Cookie-authenticated mutations need the trusted Origin."
  },
  [SERVICE_KEY_SCHEME]: {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "A service API key for non-Agent automation; it takes precedence over a session cookie."
  }
} as const

/**
 * An endpoint only a human session may use (account management, sign-out): `Authentication`,
 * then `HumanSession` (a service key is 401 before the body is read), and the document offers
 * the cookie only.
 */
export const humanSessionOnly = <N extends string, M extends HttpMethod, P, U, B, H, S, E, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<N, M, P, U, B, H, S, E, R, RE>
) => endpoint.middleware(HumanSession).middleware(Authentication)

type Requirement = Readonly<Record<string, ReadonlyArray<string>>>

const SESSION: Requirement = { [SESSION_SCHEME]: [] }
const KEY: Requirement = { [SERVICE_KEY_SCHEME]: [] }
const ANONYMOUS: Requirement = {}

/** Each operation (`<method> <OpenAPI path>`) and the credentials it accepts, from the middleware it runs. */
export const securityOf = (api: HttpApi.HttpApi.AnyWithProps): ReadonlyMap<string, ReadonlyArray<Requirement>> => {
  const operations = new Map<string, ReadonlyArray<Requirement>>()
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, middleware }) => {
      const key = `${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)\??/g, "{$1}")}`
      const runs = (tag: unknown) => (middleware as ReadonlySet<unknown>).has(tag)
      if (runs(SessionInspection)) operations.set(key, [ANONYMOUS, SESSION])
      else if (runs(Authentication)) {
        operations.set(key, runs(HumanSession) ? [SESSION] : [SESSION, KEY])
      }
    }
  })
  return operations
}

type Document = Record<string, unknown> & {
  paths?: Record<string, Record<string, Record<string, unknown>>>
  components?: Record<string, unknown>
}

/** Declares the schemes and each authenticated operation's `security` (others keep none). */
export const withSecurity = (operations: ReadonlyMap<string, ReadonlyArray<Requirement>>) =>
(spec: Record<string, unknown>): Record<string, unknown> => {
  if (operations.size === 0) return spec
  const doc = spec as Document
  doc.components = { ...doc.components, securitySchemes: SCHEMES }
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(methods)) {
      const security = operations.get(`${method} ${path}`)
      if (security !== undefined) operation["security"] = security
    }
  }
  return doc
}
