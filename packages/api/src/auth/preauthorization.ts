/**
 * An endpoint in one statement (issue 11, item 1): its authorization (a fixed permission on a
 * fixed resource) and the one row it reads ride in the credential lookup of the Authentication
 * middleware, so an authenticated read costs one round trip instead of three.
 *
 * Nothing is cached: the credential is verified and policy read from storage by that very
 * statement (SPEC 5.1, 5.2, 5.5), with the same predicate as `decide` (`allowedSqlOf`). Only the
 * allowed path is folded: an endpoint whose preauthorization is missing or not allowed runs its
 * unfolded checks (`authorize`), so a denial keeps its exact answer, reason and audit record.
 *
 * An endpoint opts in with a `Preauthorization` given to the Authentication middleware (see
 * `apiServer.ts`); its handler reads the answer with `preauthorized`.
 */
import type { HttpApiEndpoint } from "@effect/platform"
import type { SqlClient, Statement } from "@effect/sql"
import { allowedSqlOf, type Caller, type Permission, type ResourceRef } from "@svc/core/iam"

export interface Preauthorization {
  /** The endpoint (its method and path, as routed). */
  readonly endpoint: Pick<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps, "method" | "path">
  readonly permission: Permission
  readonly resource: ResourceRef
  /** At most one row the handler needs, read only when allowed; it reaches the handler as JSON. */
  readonly read?: (sql: SqlClient.SqlClient) => Statement.Fragment
}

/** What the credential statement answered for the endpoint. */
export interface Preauthorized {
  readonly allowed: boolean
  /** The `read`'s row (as JSON), or null: not allowed, no row, or no `read`. */
  readonly row: unknown
}

/** The route key a preauthorization is found by in the middleware. */
export const routeKey = (method: string, path: string) => `${method} ${path}`

/**
 * The columns the credential statement adds for `preauthorization`, over the principal it finds
 * (`svc_allowed`, `svc_row`). Appended as a lateral join, so the credential columns keep their names.
 */
export const preauthorizationSql = (
  sql: SqlClient.SqlClient,
  preauthorization: Preauthorization,
  principal: { readonly id: Statement.Fragment; readonly namespaceId: Statement.Fragment }
) => {
  const allowed = allowedSqlOf(sql, principal, preauthorization.permission, preauthorization.resource)
  const row = preauthorization.read === undefined
    ? sql`NULL::jsonb`
    : sql`(SELECT to_jsonb(svc_read) FROM (${preauthorization.read(sql)}) AS svc_read WHERE svc_gate.svc_allowed LIMIT 1)`
  return sql`SELECT svc_gate.svc_allowed, ${row} AS svc_row FROM (SELECT ${allowed} AS svc_allowed) AS svc_gate`
}

// The answer travels from the middleware to the handler with the request's own Caller (a fresh
// object per request): a handler given any other Caller finds none and runs its unfolded checks.
const answers = new WeakMap<Caller, { readonly preauthorization: Preauthorization; readonly answer: Preauthorized }>()

export const recordPreauthorized = (caller: Caller, preauthorization: Preauthorization, answer: Preauthorized): void => {
  answers.set(caller, { preauthorization, answer })
}

/** The answer the Authentication middleware found for `preauthorization` with this caller, if any. */
export const preauthorized = (caller: Caller, preauthorization: Preauthorization): Preauthorized | undefined => {
  const entry = answers.get(caller)
  return entry?.preauthorization === preauthorization ? entry.answer : undefined
}
