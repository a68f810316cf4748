import { Data, Effect, Option } from "effect"
import { NamespacesRepo } from "../db/repos/namespaces.js"
import { NamespaceId } from "../schema/ids.js"
import { WorkOutbox } from "../work/outbox.js"
import { exportedFn } from "../observability/spans.js"

export { WorkOutbox } from "../work/outbox.js"

/** The work kind of a Namespace's provisioning reconciliation (key: the Namespace id). */
export const NAMESPACE_PROVISION = "namespace.provision"

/** The work kind of a Namespace's teardown after `DELETE` (key: the Namespace id). */
export const NAMESPACE_TEARDOWN = "namespace.teardown"

/** A live Namespace already has this name (a `deleted` tombstone does not count). */
export class NamespaceNameTaken extends Data.TaggedError("NamespaceNameTaken")<{ readonly name: string }> {}

export interface NewNamespace {
  /** 1-200 characters (checked by the caller's request schema and by the table). */
  readonly name: string
  /** An operator-prepared runtime namespace to bind (SPEC 2.3); persisted as given. */
  readonly existingNamespace?: string | undefined
}

export interface CreatedNamespace {
  readonly id: NamespaceId
  readonly name: string
  readonly status: "provisioning"
  readonly existingNamespace: string | undefined
  readonly createdAt: Date
}

/**
 * The one Namespace creation path (SPEC 3, 5.6): inserts the Namespace as `provisioning` and
 * queues its reconciliation (`namespace.provision`, keyed by the Namespace id), both with the
 * ambient SqlClient, so they commit or roll back with the caller's transaction (and its audit).
 * Authorization and the audit record are the caller's. The row goes through `NamespacesRepo`,
 * built here from the ambient SqlClient so that bootstrap needs nothing else.
 */
export const createNamespace = exportedFn("Tenancy.createNamespace")(function* (input: NewNamespace) {
  const repo = yield* NamespacesRepo
  const outbox = yield* WorkOutbox
  const id = NamespaceId.make()
  const createdAt = yield* repo.insert({ id, name: input.name, existing_namespace: input.existingNamespace ?? null })
  if (Option.isNone(createdAt)) return yield* new NamespaceNameTaken({ name: input.name })
  yield* outbox.enqueue({ kind: NAMESPACE_PROVISION, key: id, payload: { namespaceId: id } })
  const created: CreatedNamespace = {
    id,
    name: input.name,
    status: "provisioning",
    existingNamespace: input.existingNamespace,
    createdAt: createdAt.value
  }
  return created
}, (effect) => Effect.provide(effect, NamespacesRepo.Default))
