/**
 * `NamespaceGuard.lockForWrite` as a plain function, for the features not yet converted to the
 * service shape (agents); it goes once they take `NamespaceGuard` as a dependency.
 */
import type { SqlClient } from "@effect/sql"
import { NotFound, type ResourceConflict } from "@svc/core/errors"
import { NamespaceId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import { NamespaceGuard, type NamespaceForWrite } from "./guard.js"

export { type NamespaceForWrite, requireExternalNamespaceProvisioned } from "./guard.js"

/**
 * Call inside the writing transaction. 404 for an absent or deleted Namespace (its tombstone),
 * 409 `RESOURCE_CONFLICT` while it is being deleted; an id that is no Namespace id names none.
 */
export const lockNamespaceForWrite = (
  namespaceId: string
): Effect.Effect<NamespaceForWrite, NotFound | ResourceConflict, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const guard = yield* NamespaceGuard
    const id = yield* Schema.decode(NamespaceId)(namespaceId).pipe(
      Effect.mapError(() => new NotFound({ message: "The Namespace does not exist." }))
    )
    return yield* guard.lockForWrite(id)
  }).pipe(Effect.provide(NamespaceGuard.Default))
