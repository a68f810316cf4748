/**
 * The `principals` table: human Principals, service principals and Agents' principals (DESIGN
 * §6). A deleted principal keeps its row (`deleted_at`), so audit records still name it.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { NamespaceId, PrincipalId, ServicePrincipalId } from "../../schema/ids.js"

export const ServicePrincipalRow = Schema.Struct({
  id: ServicePrincipalId,
  name: Schema.String,
  /** null: Installation-scoped. */
  namespace_id: Schema.NullOr(NamespaceId),
  created_at: Schema.DateFromSelf
})
export type ServicePrincipalRow = typeof ServicePrincipalRow.Type

/** Where a service principal lives: a Namespace, or the Installation (null). */
const Scope = Schema.NullOr(NamespaceId)
const InsertServicePrincipal = Schema.Struct({ id: ServicePrincipalId, namespace_id: Scope, name: Schema.String })
const ServicePrincipalKey = Schema.Struct({ id: ServicePrincipalId, namespace_id: Scope })
/** A live principal of any kind; a service principal's id is branded as such. */
export const LivePrincipalRow = Schema.Union(
  Schema.Struct({ id: ServicePrincipalId, kind: Schema.Literal("service"), namespace_id: Scope }),
  Schema.Struct({ id: Schema.String, kind: Schema.Literal("human", "agent"), namespace_id: Scope })
)
export type LivePrincipalRow = typeof LivePrincipalRow.Type
const ServicePrincipalPage = Schema.Struct({
  namespace_id: Scope,
  after: Schema.optional(Schema.String),
  limit: Schema.Int
})

export class PrincipalsRepo extends Effect.Service<PrincipalsRepo>()("@svc/core/PrincipalsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const inScope = (scope: string | null) => (scope === null ? sql`namespace_id IS NULL` : sql`namespace_id = ${scope}`)

    /**
     * Keeps its SqlError: the IAM service dies on it, bootstrap reports it as a database
     * failure of its own.
     */
    const insertService = SqlSchema.single({
      Request: InsertServicePrincipal,
      Result: ServicePrincipalRow,
      execute: (row) => sql`
        INSERT INTO principals (id, kind, namespace_id, name) VALUES (${row.id}, 'service', ${row.namespace_id}, ${row.name})
        RETURNING id, name, namespace_id, created_at
      `
    })

    /** One keyset page of the live service principals of one scope. */
    const pageService = (req: typeof ServicePrincipalPage.Type): PageQuery<typeof ServicePrincipalRow.Type> =>
      pageQuery(ServicePrincipalRow, sql`
        SELECT id, name, namespace_id, created_at FROM principals
        WHERE kind = 'service' AND deleted_at IS NULL AND ${inScope(req.namespace_id)}
          AND ${afterCursor(sql, "id", req.after)}
        ORDER BY id
        LIMIT ${req.limit}
      `)

    const findService = SqlSchema.findOne({
      Request: ServicePrincipalKey,
      Result: ServicePrincipalRow,
      execute: (key) => sql`
        SELECT id, name, namespace_id, created_at FROM principals
        WHERE id = ${key.id} AND kind = 'service' AND deleted_at IS NULL AND ${inScope(key.namespace_id)}
      `
    })

    /** Marks a live service principal of the scope deleted; None when there was none. */
    const markServiceDeleted = SqlSchema.findOne({
      Request: ServicePrincipalKey,
      Result: Schema.Struct({ id: ServicePrincipalId }),
      execute: (key) => sql`
        UPDATE principals SET deleted_at = now()
        WHERE id = ${key.id} AND kind = 'service' AND deleted_at IS NULL AND ${inScope(key.namespace_id)}
        RETURNING id
      `
    })

    /**
     * The kind and scope of a live principal of any kind, locked FOR SHARE for the rest of the
     * caller's transaction (against its deletion while it is being bound).
     */
    const lockLive = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ kind: Schema.String, namespace_id: Schema.NullOr(NamespaceId) }),
      execute: (id) => sql`
        SELECT kind, namespace_id FROM principals
        WHERE id = ${id} AND deleted_at IS NULL
        FOR SHARE
      `
    })

    /** Keeps its SqlError: service-key issuance answers its own 503. */
    const findLive = SqlSchema.findOne({
      Request: Schema.String,
      Result: LivePrincipalRow,
      execute: (id) => sql`SELECT id, kind, namespace_id FROM principals WHERE id = ${id} AND deleted_at IS NULL`
    })

    /** A human Principal, Installation-wide; keeps its SqlError for bootstrap to report. */
    const insertHuman = SqlSchema.void({
      Request: Schema.Struct({ id: PrincipalId, name: Schema.String }),
      execute: (row) => sql`INSERT INTO principals (id, kind, namespace_id, name) VALUES (${row.id}, 'human', NULL, ${row.name})`
    })

    return {
      insertHuman,
      findLive: (id: string) => findLive(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      lockLive: (id: string) => lockLive(id).pipe(Effect.orDie),
      /** As `lockLive`, keeping the SqlError: service-key issuance answers its own 503. */
      lockLiveRetryable: (id: string) => lockLive(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      insertService,
      pageService,
      findService: (key: typeof ServicePrincipalKey.Type) => findService(key).pipe(Effect.orDie),
      markServiceDeleted: (key: typeof ServicePrincipalKey.Type) => markServiceDeleted(key).pipe(Effect.orDie)
    }
  })
}) {}
