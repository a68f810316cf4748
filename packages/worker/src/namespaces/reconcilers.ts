/**
 * The Namespace reconcilers (SPEC 3, DESIGN §8): `namespace.provision` and `namespace.teardown`,
 * each keyed by the Namespace id, converging the Compute Driver's runtime space to the status
 * recorded in `namespaces`.
 *
 * Each runs in one transaction holding the Namespace's row lock (`FOR UPDATE`) across the driver
 * call, so a provisioning and a teardown of the same Namespace never interleave (a provision that
 * loses the race to `DELETE` finds `deleting` and does nothing), and the status write commits only
 * after the driver succeeded. Both are idempotent: a repeat after a crash finds the runtime space
 * already converged, or the status already moved on.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { type NamespaceWriteRow, NamespacesRepo } from "@svc/core/db"
import { ComputeDriver, type ComputeError } from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { NAMESPACE_PROVISION, NAMESPACE_TEARDOWN } from "@svc/core/tenancy"
import { Effect, Layer, Option, Schema } from "effect"
import * as WorkHandler from "../engine/handler.js"
import { WorkFailure } from "../engine/failure.js"
import type { HandlerContext } from "../engine/handlers.js"
import { exportedFn } from "@svc/core/observability"

export const NamespaceWorkPayload = Schema.Struct({ namespaceId: NamespaceId })

/** A teardown also names who asked for it (absent on items queued before it did). */
export const NamespaceTeardownPayload = Schema.Struct({
  namespaceId: NamespaceId,
  initiatorPrincipalId: Schema.optional(Schema.String)
})

export const NamespaceWorkCodes = {
  DEPENDENCY_UNAVAILABLE: "DEPENDENCY_UNAVAILABLE",
  NOT_IMPLEMENTED: "NOT_IMPLEMENTED"
} as const

const databaseFailure = (cause: unknown) =>
  Effect.logWarning("namespace reconciler: database unavailable", { cause: String(cause) }).pipe(
    Effect.zipRight(
      new WorkFailure({
        code: NamespaceWorkCodes.DEPENDENCY_UNAVAILABLE,
        message: "The database was unavailable; the work will be retried."
      })
    )
  )

const driverFailure = (error: ComputeError): WorkFailure =>
  error._tag === "ComputeNotImplemented"
    ? new WorkFailure({
      code: NamespaceWorkCodes.NOT_IMPLEMENTED,
      message: "The selected Compute Driver does not implement this operation.",
      permanent: true
    })
    : new WorkFailure({ code: error.code, message: error.message, permanent: error.permanent })

const runtime = (id: NamespaceId, row: NamespaceWriteRow) => ({
  id,
  existingNamespace: row.existing_namespace ?? undefined
})

/** A permanent driver failure is the outcome of provisioning: the Namespace becomes `failed`. */
class Permanent {
  readonly _tag = "Permanent"
  constructor(readonly failure: WorkFailure) {}
}

/** `namespace.provision`: `provisioning` → driver → `ready` (or `failed` on a permanent failure). */
export const provisionNamespace = exportedFn("Namespaces.provision")(function* (namespaceId: NamespaceId) {
  const sql = yield* SqlClient.SqlClient
  const namespaces = yield* NamespacesRepo
  const driver = yield* ComputeDriver
  const outcome = yield* sql.withTransaction(
    Effect.gen(function* () {
      const row = yield* namespaces.lockForUpdate(namespaceId)
      // Gone, already converged, or being deleted: nothing to provision.
      if (Option.isNone(row) || row.value.status !== "provisioning") return undefined
      const failure = yield* driver.provisionNamespace(runtime(namespaceId, row.value)).pipe(
        Effect.mapError(driverFailure),
        Effect.flip,
        Effect.option
      )
      if (failure._tag === "Some") {
        const error = failure.value
        if (error.permanent !== true) return yield* error
        yield* namespaces.moveStatus({ id: namespaceId, from: "provisioning", to: "failed" })
        yield* Effect.logWarning("namespace provisioning failed permanently", { namespaceId, code: error.code })
        return new Permanent(error)
      }
      yield* namespaces.moveStatus({ id: namespaceId, from: "provisioning", to: "ready" })
      return undefined
    })
  ).pipe(Effect.catchTag("SqlError", databaseFailure))
  // The `failed` status is committed; the work item records the driver's code as its outcome.
  if (outcome !== undefined) return yield* outcome.failure
})

/**
 * SPEC 6: a failed teardown is audited, attributed to whoever asked for the deletion, so the
 * record stays beside the retry's event; once per teardown item (its first failed attempt) and
 * for a permanent failure, not for every backoff retry.
 */
const auditTeardownFailure = (payload: typeof NamespaceTeardownPayload.Type, failure: WorkFailure, attempt: number) =>
  attempt === 1 || failure.permanent === true
    ? recordAudit({
      kind: "namespace.deletion-failed",
      outcome: "failure",
      actorPrincipalId: payload.initiatorPrincipalId ?? null,
      namespaceId: payload.namespaceId,
      resource: { kind: "namespace", id: payload.namespaceId },
      details: { code: failure.code, attempt, permanent: failure.permanent === true }
    }).pipe(Effect.catchAll((error) => Effect.logWarning("namespace teardown failure could not be audited", { cause: String(error) })))
    : Effect.void

/** `namespace.teardown`: `deleting` → driver → the Namespace's own policy removed → `deleted` (the tombstone). */
export const teardownNamespace = exportedFn("Namespaces.teardown")(function* (
  payload: typeof NamespaceTeardownPayload.Type,
  context?: HandlerContext
) {
  yield* removeNamespace(payload.namespaceId).pipe(
    Effect.tapError((failure) => auditTeardownFailure(payload, failure, context?.attempt ?? 1))
  )
})

const removeNamespace = (namespaceId: NamespaceId) => Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const namespaces = yield* NamespacesRepo
  const driver = yield* ComputeDriver
  yield* sql.withTransaction(
    Effect.gen(function* () {
      const row = yield* namespaces.lockForUpdate(namespaceId)
      // Gone or already a tombstone: converged. Any other status was not asked to go away.
      if (Option.isNone(row) || row.value.status !== "deleting") return
      yield* driver.teardownNamespace(runtime(namespaceId, row.value)).pipe(Effect.mapError(driverFailure))
      // Its Roles and bindings did not block the DELETE; they go with the tombstone.
      yield* namespaces.removePolicy(namespaceId)
      yield* namespaces.moveStatus({ id: namespaceId, from: "deleting", to: "deleted" })
    })
  ).pipe(Effect.catchTag("SqlError", databaseFailure))
})

/**
 * Both Namespace reconcilers; they need the Compute Driver, the engine's database client and
 * the `NamespacesRepo` (the worker's composition provides it).
 */
export const NamespaceReconcilersLive = Layer.mergeAll(
  WorkHandler.layer(NAMESPACE_PROVISION, NamespaceWorkPayload, ({ namespaceId }) => provisionNamespace(namespaceId)),
  WorkHandler.layer(NAMESPACE_TEARDOWN, NamespaceTeardownPayload, (payload, context) => teardownNamespace(payload, context))
)
