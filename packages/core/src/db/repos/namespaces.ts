/**
 * The `namespaces` table, shared by the API (the Namespaces feature, and every feature that
 * checks the Namespace before it writes into it) and the worker's Namespace reconcilers. A
 * deleted Namespace is a tombstone: the `Live` queries do not see it (SPEC 3).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { NamespaceId } from "../../schema/ids.js"

export const NamespaceStatusColumn = Schema.Literal("provisioning", "ready", "failed", "deleting", "deleted")
export type NamespaceStatusColumn = typeof NamespaceStatusColumn.Type

/** The statuses of a live Namespace: every one but the `deleted` tombstone's (SPEC 3). */
export const LiveNamespaceStatus = Schema.Literal("provisioning", "ready", "failed", "deleting")

/** A live Namespace's row: what `findLive`, `page` and `markDeleting` read. */
export const NamespaceRow = Schema.Struct({
  id: NamespaceId,
  name: Schema.String,
  status: LiveNamespaceStatus,
  existing_namespace: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type NamespaceRow = typeof NamespaceRow.Type

/** What a writer into a Namespace, or a reconciler of it, needs to know about it. */
export const NamespaceWriteRow = Schema.Struct({
  status: NamespaceStatusColumn,
  existing_namespace: Schema.NullOr(Schema.String)
})
export type NamespaceWriteRow = typeof NamespaceWriteRow.Type

const InsertNamespace = Schema.Struct({ id: NamespaceId, name: Schema.String, existing_namespace: Schema.NullOr(Schema.String) })
const StatusMove = Schema.Struct({ id: NamespaceId, from: NamespaceStatusColumn, to: NamespaceStatusColumn })
const NamespacePage = Schema.Struct({ after: Schema.optional(Schema.String), limit: Schema.Int })

export class NamespacesRepo extends Effect.Service<NamespacesRepo>()("@svc/core/NamespacesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal("n.id, n.name, n.status, n.existing_namespace, n.created_at, n.updated_at")

    /**
     * A new Namespace, `provisioning`; none when a live Namespace has the name (a `deleted`
     * tombstone does not count).
     */
    const insert = SqlSchema.findOne({
      Request: InsertNamespace,
      Result: Schema.Struct({ created_at: Schema.DateFromSelf }),
      execute: (row) => sql`
        INSERT INTO namespaces (id, name, status, existing_namespace)
        VALUES (${row.id}, ${row.name}, 'provisioning', ${row.existing_namespace})
        ON CONFLICT (name) WHERE status <> 'deleted' DO NOTHING
        RETURNING created_at
      `
    })

    /** Whether the Namespace exists (a deleted Namespace's tombstone does not count, SPEC 3). */
    const isLive = SqlSchema.findOne({
      Request: NamespaceId,
      Result: Schema.Struct({ id: NamespaceId }),
      execute: (id) => sql`SELECT id FROM namespaces WHERE id = ${id} AND status <> 'deleted'`
    })

    /** The live Namespace; `lock` takes its row FOR UPDATE (the deleting transaction). */
    const findLive = (id: NamespaceId, lock: boolean) =>
      SqlSchema.findOne({
        Request: NamespaceId,
        Result: NamespaceRow,
        execute: (key) => sql`
          SELECT ${columns} FROM namespaces n WHERE n.id = ${key} AND n.status <> 'deleted'
          ${lock ? sql`FOR UPDATE` : sql``}
        `
      })(id).pipe(Effect.orDie)

    /**
     * The Namespace's row, locked FOR SHARE for the rest of the caller's transaction: that
     * orders a write into the Namespace against its deletion (which locks FOR UPDATE).
     */
    const lockForShare = SqlSchema.findOne({
      Request: NamespaceId,
      Result: NamespaceWriteRow,
      execute: (id) => sql`SELECT status, existing_namespace FROM namespaces WHERE id = ${id} FOR SHARE`
    })

    /**
     * The Namespace's row, whatever its status, locked FOR UPDATE for the rest of the caller's
     * transaction: a reconciler holds it across the driver call, so a provisioning and a
     * teardown of one Namespace never interleave.
     */
    const lockForUpdate = SqlSchema.findOne({
      Request: NamespaceId,
      Result: NamespaceWriteRow,
      execute: (id) => sql`SELECT status, existing_namespace FROM namespaces WHERE id = ${id} FOR UPDATE`
    })

    /** Moves the status on only from `from`, so a repeat or a raced move changes nothing. */
    const moveStatus = SqlSchema.void({
      Request: StatusMove,
      execute: (move) => sql`
        UPDATE namespaces SET status = ${move.to}, updated_at = now()
        WHERE id = ${move.id} AND status = ${move.from}
      `
    })

    const markDeleting = SqlSchema.single({
      Request: NamespaceId,
      Result: NamespaceRow,
      execute: (id) => sql`
        UPDATE namespaces n SET status = 'deleting', updated_at = now() WHERE n.id = ${id}
        RETURNING ${columns}
      `
    })

    /**
     * Whether anything keeps the Namespace from being deleted (SPEC 4.2 409
     * `NAMESPACE_NOT_EMPTY`): today, its live Namespace-scoped service principals (automation
     * identities that hold keys; a deleted one keeps its row for the audit trail and holds nothing), Secrets, Configurations, Presets and Agents (a `deleting` one
     * included). Custom Roles and AccessBindings are the Namespace's own policy and do not
     * block. Capabilities add their tables (service accounts, credential sources) here.
     * Writers lock the Namespace row FOR SHARE (`lockForShare`), so none slips past this count.
     */
    const holdsResources = SqlSchema.findAll({
      Request: NamespaceId,
      Result: Schema.Struct({ held: Schema.Literal(1) }),
      execute: (id) => sql`
        SELECT 1 AS held FROM principals WHERE namespace_id = ${id} AND kind = 'service' AND deleted_at IS NULL
        UNION ALL SELECT 1 FROM secrets WHERE namespace_id = ${id}
        UNION ALL SELECT 1 FROM configurations WHERE namespace_id = ${id}
        UNION ALL SELECT 1 FROM agents WHERE namespace_id = ${id}
        UNION ALL SELECT 1 FROM presets WHERE namespace_id = ${id}
        UNION ALL SELECT 1 FROM service_accounts WHERE namespace_id = ${id}
        UNION ALL SELECT 1 FROM credential_sources WHERE namespace_id = ${id}
        LIMIT 1
      `
    })

    /**
     * Removes the Namespace's own policy, which does not keep it from being deleted: its custom
     * Roles, every AccessBinding in it (or granting one of those Roles), and the Restrictions on
     * the Namespace, its Roles and its bindings. For the teardown's transaction, which commits it
     * with the tombstone; IAM writers lock the row FOR SHARE and refuse a `deleting` Namespace,
     * so nothing is added after this.
     */
    const removePolicy = (id: NamespaceId) =>
      Effect.gen(function* () {
        const roles = sql`SELECT r.id FROM roles r WHERE r.namespace_id = ${id}`
        const bindings = sql`SELECT b.id FROM access_bindings b WHERE b.namespace_id = ${id} OR b.role_id IN (${roles})`
        yield* sql`
          DELETE FROM restrictions
          WHERE (resource_kind = 'namespace' AND resource_id = ${id})
            OR (resource_kind = 'iam_role' AND resource_id IN (${roles}))
            OR (resource_kind = 'iam_access_binding' AND resource_id IN (${bindings}))
        `
        yield* sql`DELETE FROM access_bindings WHERE id IN (${bindings})`
        yield* sql`DELETE FROM roles WHERE namespace_id = ${id}`
      })

    /**
     * One keyset page of the live Namespaces, filtered by `visible` (the caller's `visibleTo`
     * fragment over `n.id`).
     */
    const page = (req: typeof NamespacePage.Type, visible: Statement.Fragment): PageQuery<typeof NamespaceRow.Type> =>
      pageQuery(NamespaceRow, sql`
          SELECT ${columns} FROM namespaces n
          WHERE n.status <> 'deleted'
            AND ${afterCursor(sql, "n.id", req.after)}
            AND ${visible}
          ORDER BY n.id
          LIMIT ${req.limit}
        `)

    return {
      /** Keeps the SqlError for the caller's transaction to end in. */
      insert: (row: typeof InsertNamespace.Type) =>
        insert(row).pipe(Effect.map(Option.map((created) => created.created_at)), Effect.catchTag("ParseError", Effect.die)),
      isLive: (id: NamespaceId) => isLive(id).pipe(Effect.map(Option.isSome), Effect.orDie),
      findLive: (id: NamespaceId) => findLive(id, false),
      /** Call inside the deleting transaction. */
      lockLive: (id: NamespaceId) => findLive(id, true),
      lockForShare: (id: NamespaceId) => lockForShare(id).pipe(Effect.orDie),
      /**
       * For the reconcilers, which keep the SqlError: a lost database is retried work
       * (`DEPENDENCY_UNAVAILABLE`), not a defect.
       */
      lockForUpdate: (id: NamespaceId) => lockForUpdate(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** For the reconcilers, which keep the SqlError (see `lockForUpdate`). */
      moveStatus: (move: typeof StatusMove.Type) => moveStatus(move).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** For the teardown, which keeps the SqlError (see `lockForUpdate`). */
      removePolicy,
      markDeleting: (id: NamespaceId) => markDeleting(id).pipe(Effect.orDie),
      holdsResources: (id: NamespaceId) => holdsResources(id).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      page,
      /** As `lockForShare`, keeping the SqlError for a caller that retries on it (a worker's reconciler). */
      lockForShareRetryable: (id: NamespaceId) => lockForShare(id).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}
