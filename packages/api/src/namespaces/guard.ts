/**
 * What a feature checks about the Namespace in its path before it reads or writes inside it:
 * that it exists (404 otherwise; a deleted Namespace's tombstone does not count, SPEC 3), and,
 * for a writer, that it is not being deleted (409) with the row locked FOR SHARE for the rest of
 * the writer's transaction. `DELETE /namespaces/{id}` locks the row FOR UPDATE before counting
 * what the Namespace holds, so either it sees the new resource (409 `NAMESPACE_NOT_EMPTY`) or
 * the writer sees `deleting`: nothing outlives its Namespace.
 */
import { NamespacesRepo } from "@svc/core/db"
import { NamespaceNotReady, NotFound, ResourceConflict } from "@svc/core/errors"
import type { NamespaceId } from "@svc/core/schema"
import { Effect, Option } from "effect"

export interface NamespaceForWrite {
  readonly status: "provisioning" | "ready" | "failed" | "deleting"
  readonly existingNamespace: string | null
}

/**
 * SPEC 7.3: a Namespace bound to an operator-prepared runtime namespace accepts Configurations
 * only once provisioning has completed (409 `NAMESPACE_NOT_READY`).
 */
export const requireExternalNamespaceProvisioned = (namespace: NamespaceForWrite) =>
  namespace.existingNamespace !== null && namespace.status === "provisioning"
    ? Effect.fail(new NamespaceNotReady({ message: "The Namespace's runtime namespace is not provisioned yet." }))
    : Effect.void

const absent = () => new NotFound({ message: "The Namespace does not exist." })

export class NamespaceGuard extends Effect.Service<NamespaceGuard>()("@svc/api/NamespaceGuard", {
  effect: Effect.gen(function* () {
    const namespaces = yield* NamespacesRepo
    return {
      requireLive: (id: NamespaceId): Effect.Effect<void, NotFound> =>
        Effect.flatMap(namespaces.isLive(id), (live) => (live ? Effect.void : Effect.fail(absent()))),
      /** Call inside the writing transaction. */
      lockForWrite: (id: NamespaceId): Effect.Effect<NamespaceForWrite, NotFound | ResourceConflict> =>
        Effect.flatMap(namespaces.lockForShare(id), (row): Effect.Effect<NamespaceForWrite, NotFound | ResourceConflict> => {
          if (Option.isNone(row) || row.value.status === "deleted") return Effect.fail(absent())
          if (row.value.status === "deleting") return Effect.fail(new ResourceConflict({ message: "The Namespace is being deleted." }))
          return Effect.succeed({ status: row.value.status, existingNamespace: row.value.existing_namespace })
        })
    }
  }),
  dependencies: [NamespacesRepo.Default]
}) {}
