/**
 * What the resource handlers share: the Namespace's resource reference, page bounds, and
 * recognising the constraint violations PostgreSQL reports.
 * The IAM list authorization is in `./policy.ts`.
 */
import { BuiltinRoles, type ResourceRef } from "@svc/core/iam"
import { DEFAULT_PAGE_SIZE, type PageParams } from "@svc/core/api"

export const namespaceRef = (id: string): ResourceRef => ({ kind: "namespace", id })

export const builtinRoleNames: ReadonlySet<string> = new Set(Object.values(BuiltinRoles).map((role) => role.name))

export interface Page {
  readonly limit: number
  readonly after: string | undefined
}

export const pageOf = (params: PageParams): Page => ({ limit: params.limit ?? DEFAULT_PAGE_SIZE, after: params.after })

export { isForeignKeyViolation, isUniqueViolation } from "@svc/core/db"
