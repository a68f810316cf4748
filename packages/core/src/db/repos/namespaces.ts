/**
 * The `namespaces` table: the rows other features need to check before they write into a
 * Namespace. The Namespaces feature's own queries join it here as it moves to this shape.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { NamespaceId } from "../../schema/ids.js"

export const NamespaceStatusColumn = Schema.Literal("provisioning", "ready", "failed", "deleting", "deleted")

/** What a writer into a Namespace needs to know about it. */
export const NamespaceWriteRow = Schema.Struct({
  status: NamespaceStatusColumn,
  existing_namespace: Schema.NullOr(Schema.String)
})
export type NamespaceWriteRow = typeof NamespaceWriteRow.Type

export class NamespacesRepo extends Effect.Service<NamespacesRepo>()("@svc/core/NamespacesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Whether the Namespace exists (a deleted Namespace's tombstone does not count, SPEC 3). */
    const isLive = SqlSchema.findOne({
      Request: NamespaceId,
      Result: Schema.Struct({ id: NamespaceId }),
      execute: (id) => sql`SELECT id FROM namespaces WHERE id = ${id} AND status <> 'deleted'`
    })

    /**
     * The Namespace's row, locked FOR SHARE for the rest of the caller's transaction: that
     * orders a write into the Namespace against its deletion (which locks FOR UPDATE).
     */
    const lockForShare = SqlSchema.findOne({
      Request: NamespaceId,
      Result: NamespaceWriteRow,
      execute: (id) => sql`SELECT status, existing_namespace FROM namespaces WHERE id = ${id} FOR SHARE`
    })

    return {
      isLive: (id: NamespaceId) => isLive(id).pipe(Effect.map((row) => row._tag === "Some"), Effect.orDie),
      lockForShare: (id: NamespaceId) => lockForShare(id).pipe(Effect.orDie),
      /** As `lockForShare`, keeping the SqlError for a caller that retries on it (a worker's reconciler). */
      lockForShareRetryable: (id: NamespaceId) => lockForShare(id).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}
