/**
 * What every IAM handler shares: the Namespace in the path must exist, list authorization
 * (SPEC 4.7: `administer` on the Installation and `read` on the Namespace), page bounds, and
 * recognising the constraint violations PostgreSQL reports.
 */
import { SqlClient } from "@effect/sql"
import { NotFound } from "@svc/core/errors"
import { BuiltinRoles, CurrentCaller, Installation, type ResourceRef } from "@svc/core/iam"
import { Effect } from "effect"
import { type AuthorizationError, authorize } from "../auth/authorize.js"
import { DEFAULT_PAGE_SIZE, type PageParams } from "@svc/core/api"

export const namespaceRef = (id: string): ResourceRef => ({ kind: "namespace", id })

export const builtinRoleNames: ReadonlySet<string> = new Set(Object.values(BuiltinRoles).map((role) => role.name))

/** 404 unless the Namespace exists (a deleted Namespace's tombstone does not count, SPEC 3). */
export const requireNamespace = (namespaceId: string): Effect.Effect<void, NotFound, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT 1 FROM namespaces WHERE id = ${namespaceId} AND status <> 'deleted'`.pipe(Effect.orDie)
    if (rows.length === 0) return yield* new NotFound({ message: "The Namespace does not exist." })
  })

/**
 * SPEC 4.7 list authorization: `read` on the Namespace first (404 when the caller cannot see
 * it, so nothing leaks), then `administer` on the Installation (403), then the Namespace must
 * exist.
 */
export const authorizeNamespaceAdministration = (
  namespaceId: string
): Effect.Effect<void, AuthorizationError, CurrentCaller | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    yield* authorize("namespace:read", namespaceRef(namespaceId))
    yield* authorize("installation:administer", Installation)
    yield* requireNamespace(namespaceId)
  })

export interface Page {
  readonly limit: number
  readonly after: string | undefined
}

export const pageOf = (params: PageParams): Page => ({ limit: params.limit ?? DEFAULT_PAGE_SIZE, after: params.after })

export { isForeignKeyViolation, isUniqueViolation } from "@svc/core/db"
