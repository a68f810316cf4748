/**
 * Reading the `audit_events` table (written by `@svc/core/audit`): one keyset page in
 * `(at, id)` order per statement (migration 0013 indexes both orders used).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type PageQuery, pageQuery } from "../pageQuery.js"

export const AuditEventRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  at: Schema.DateFromSelf,
  /** `at` at the database's precision (microseconds), for the next page's cursor. */
  at_key: Schema.String,
  outcome: Schema.Literal("success", "failure", "denied"),
  actor_principal_id: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String),
  namespace_id: Schema.NullOr(Schema.String),
  resource_kind: Schema.NullOr(Schema.String),
  resource_id: Schema.NullOr(Schema.String),
  details: Schema.Unknown
})
export type AuditEventRow = typeof AuditEventRow.Type

/** A page's filters; an absent field does not filter. `after` is the previous page's last row. */
export const AuditEventFilter = Schema.Struct({
  namespaceId: Schema.optional(Schema.String),
  after: Schema.optional(Schema.Struct({ at: Schema.String, id: Schema.String })),
  since: Schema.optional(Schema.DateFromSelf),
  until: Schema.optional(Schema.DateFromSelf),
  actor: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.String),
  resourceKind: Schema.optional(Schema.String),
  resourceId: Schema.optional(Schema.String),
  outcome: Schema.optional(Schema.String),
  limit: Schema.Int
})
export type AuditEventFilter = typeof AuditEventFilter.Type

export class AuditEventsRepo extends Effect.Service<AuditEventsRepo>()("@svc/core/AuditEventsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Ordered by `(at, seq)`: `seq` is the bigint id (`id` is its text, which sorts differently). */
    const page = (filter: AuditEventFilter): PageQuery<typeof AuditEventRow.Type> => {
      const where = [
        filter.namespaceId === undefined ? undefined : sql`namespace_id = ${filter.namespaceId}`,
        filter.after === undefined
          ? undefined
          : sql`(at, id) > (${filter.after.at}::timestamptz, ${filter.after.id}::bigint)`,
        filter.since === undefined ? undefined : sql`at >= ${filter.since}`,
        filter.until === undefined ? undefined : sql`at < ${filter.until}`,
        filter.actor === undefined ? undefined : sql`actor_principal_id = ${filter.actor}`,
        filter.kind === undefined ? undefined : sql`kind = ${filter.kind}`,
        filter.resourceKind === undefined ? undefined : sql`resource_kind = ${filter.resourceKind}`,
        filter.resourceId === undefined ? undefined : sql`resource_id = ${filter.resourceId}`,
        filter.outcome === undefined ? undefined : sql`outcome = ${filter.outcome}`
      ].filter((clause) => clause !== undefined)
      return pageQuery(AuditEventRow, sql`
        SELECT id::text AS id, id AS seq, kind, at,
          to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key,
          outcome, actor_principal_id, request_id, namespace_id, resource_kind, resource_id, details
        FROM audit_events
        WHERE ${sql.and(where)}
        ORDER BY at, id
        LIMIT ${filter.limit}
      `, "page.at, page.seq")
    }

    return { page } as const
  })
}) {}
