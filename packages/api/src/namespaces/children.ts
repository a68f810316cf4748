/**
 * Writing a resource into a Namespace (a Secret, a Configuration, ...). The Namespace row is
 * locked FOR SHARE for the rest of the writer's transaction, which orders the write against
 * `DELETE /namespaces/{id}` (it locks the row FOR UPDATE before counting what the Namespace
 * holds): either the delete sees the new resource and answers 409 `NAMESPACE_NOT_EMPTY`, or the
 * writer sees `deleting` and is refused. Without the lock a resource could outlive its Namespace.
 */
import { SqlClient } from "@effect/sql"
import { NamespaceNotReady, NotFound, ResourceConflict } from "@svc/core/errors"
import { Effect } from "effect"

export interface NamespaceForWrite {
  readonly status: "provisioning" | "ready" | "failed" | "deleting"
  readonly existingNamespace: string | null
}

/**
 * Call inside the writing transaction. 404 for an absent or deleted Namespace (its tombstone),
 * 409 `RESOURCE_CONFLICT` while it is being deleted.
 */
export const lockNamespaceForWrite = (
  namespaceId: string
): Effect.Effect<NamespaceForWrite, NotFound | ResourceConflict, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ status: NamespaceForWrite["status"] | "deleted"; existing_namespace: string | null }>`
      SELECT status, existing_namespace FROM namespaces WHERE id = ${namespaceId} FOR SHARE
    `.pipe(Effect.orDie)
    const row = rows[0]
    if (row === undefined || row.status === "deleted") return yield* new NotFound({ message: "The Namespace does not exist." })
    if (row.status === "deleting") return yield* new ResourceConflict({ message: "The Namespace is being deleted." })
    return { status: row.status, existingNamespace: row.existing_namespace }
  })

/**
 * SPEC 7.3: a Namespace bound to an operator-prepared runtime namespace accepts Configurations
 * only once provisioning has completed (409 `NAMESPACE_NOT_READY`).
 */
export const requireExternalNamespaceProvisioned = (namespace: NamespaceForWrite) =>
  namespace.existingNamespace !== null && namespace.status === "provisioning"
    ? Effect.fail(new NamespaceNotReady({ message: "The Namespace's runtime namespace is not provisioned yet." }))
    : Effect.void
