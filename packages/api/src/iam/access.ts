/**
 * What the resource handlers share: the Namespace in the path must exist (features not yet on
 * `NamespaceGuard`), page bounds, and recognising the constraint violations PostgreSQL reports.
 * The IAM list authorization is in `./policy.ts`.
 */
import { SqlClient } from "@effect/sql"
import { NotFound } from "@svc/core/errors"
import { BuiltinRoles, type ResourceRef } from "@svc/core/iam"
import { Effect } from "effect"
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

export interface Page {
  readonly limit: number
  readonly after: string | undefined
}

export const pageOf = (params: PageParams): Page => ({ limit: params.limit ?? DEFAULT_PAGE_SIZE, after: params.after })

export { isForeignKeyViolation, isUniqueViolation } from "@svc/core/db"
