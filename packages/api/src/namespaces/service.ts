/**
 * Namespaces (SPEC 3, 4.2): creation queues provisioning, deletion queues teardown; the worker's
 * reconcilers move the status on (`ready`, `failed`, `deleted`). A deleted Namespace is a
 * tombstone: 404 here and absent from lists.
 */
import { SqlClient } from "@effect/sql"
import type { Namespace, PageParams } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { InstallationConfiguration } from "@svc/core/config"
import { type NamespaceRow, NamespacesRepo, WorkItemsRepo } from "@svc/core/db"
import { supportsExistingNamespace } from "@svc/core/drivers/compute"
import { NamespaceNotEmpty, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, Installation, visibleTo } from "@svc/core/iam"
import type { NamespaceId } from "@svc/core/schema"
import { createNamespace, NAMESPACE_TEARDOWN, WorkOutbox } from "@svc/core/tenancy"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages } from "../auth/gatedPage.js"
import { pageOf } from "../iam/access.js"
import { namespaceRef } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

const toNamespace = (row: NamespaceRow): Namespace => ({
  id: row.id,
  name: row.name,
  status: row.status,
  ...(row.existing_namespace === null ? {} : { existingNamespace: row.existing_namespace }),
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const notFound = () => new NotFound({ message: "The Namespace does not exist." })

export class Namespaces extends Effect.Service<Namespaces>()("@svc/api/Namespaces", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* NamespacesRepo
    const outbox = yield* WorkOutbox
    const work = yield* WorkItemsRepo
    const installation = yield* InstallationConfiguration
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const pages = yield* GatedPages

    const create = exportedFn("Namespaces.create")(function* (payload: {
      readonly name: string
      readonly existingNamespace?: string | undefined
    }) {
      const caller = yield* CurrentCaller
      yield* authorize("namespace:create", Installation)
      if (payload.existingNamespace !== undefined) {
        yield* authorize("installation:administer", Installation)
        if (!supportsExistingNamespace(installation.drivers.compute)) {
          return yield* new ResourceConflict({
            message: `The ${installation.drivers.compute.id} Compute Driver cannot bind an existingNamespace.`
          })
        }
      }
      const insert = Effect.gen(function* () {
        const created = yield* createNamespace(payload)
        yield* audit.record({
          kind: "namespace.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId: created.id,
          resource: { kind: "namespace", id: created.id },
          details: { name: created.name, ...(created.existingNamespace === undefined ? {} : { existingNamespace: created.existingNamespace }) }
        })
        // Read in the transaction: the Namespace as created (`provisioning`, SPEC 3). After the
        // commit a fast worker may already have provisioned it.
        const row = yield* repo.findLive(created.id)
        if (Option.isNone(row)) return yield* Effect.dieMessage("created Namespace vanished")
        return row.value
      })
      // The creation path shared with bootstrap runs on the ambient client and outbox.
      const row = yield* sql.withTransaction(insert).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.provideService(WorkOutbox, outbox),
        Effect.catchTags({
          NamespaceNameTaken: () => Effect.fail(new ResourceConflict({ message: "A Namespace with this name already exists." })),
          SqlError: Effect.die
        })
      )
      return toNamespace(row)
    })

    const list = exportedFn("Namespaces.list")(function* (params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "namespace:read", "namespace", { id: "n.id", namespaceId: "n.id" })
      // Installation-wide: no gate beyond `visible`, nothing to be missing.
      const rows = yield* pages.page({ gates: [], parentLive: sql`TRUE`, missing: notFound, page: repo.page({ after: page.after, limit: page.limit }, visible) })
      return rows.map(toNamespace)
    })

    const get = exportedFn("Namespaces.get")(function* (namespaceId: NamespaceId) {
      yield* authorize("namespace:read", namespaceRef(namespaceId))
      const row = yield* repo.findLive(namespaceId)
      return yield* Option.match(row, { onNone: () => Effect.fail(notFound()), onSome: (r) => Effect.succeed(toNamespace(r)) })
    })

    /** Queues the teardown and audits who asked for it, in the caller's transaction. */
    const enqueueTeardown = (
      namespaceId: NamespaceId,
      actorPrincipalId: string,
      kind: "namespace.deleted" | "namespace.deletion-retried"
    ) =>
      Effect.gen(function* () {
        // The initiator rides with the work: the worker attributes a failed teardown to it (SPEC 6).
        const payload = { namespaceId, initiatorPrincipalId: actorPrincipalId }
        yield* outbox.enqueue({ kind: NAMESPACE_TEARDOWN, key: namespaceId, payload }).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        )
        yield* audit.record({
          kind,
          outcome: "success",
          actorPrincipalId,
          namespaceId,
          resource: { kind: "namespace", id: namespaceId }
        }).pipe(Effect.orDie)
      })

    const remove = exportedFn("Namespaces.delete")(function* (namespaceId: NamespaceId) {
      const caller = yield* CurrentCaller
      yield* authorize("namespace:delete", namespaceRef(namespaceId))
      const write = Effect.gen(function* () {
        // The row lock orders this against the reconcilers (which hold it across the driver call).
        const row = yield* repo.lockLive(namespaceId)
        if (Option.isNone(row)) return yield* notFound()
        if (row.value.status === "deleting") {
          // SPEC 3: a repeat while the teardown runs changes nothing. One that gave up (permanent
          // failure or past its deadline) would leave the Namespace `deleting` for good: a
          // repeat then retries it, with an event of its own (SPEC 6, deletion retries).
          const teardown = yield* work.status(NAMESPACE_TEARDOWN, namespaceId)
          if (teardown.item === undefined || teardown.status !== "failed") return toNamespace(row.value)
          yield* enqueueTeardown(namespaceId, caller.principalId, "namespace.deletion-retried")
          return toNamespace(row.value)
        }
        if (yield* repo.holdsResources(namespaceId)) {
          return yield* new NamespaceNotEmpty({ message: "The Namespace still holds resources; delete them first." })
        }
        const updated = yield* repo.markDeleting(namespaceId)
        yield* enqueueTeardown(namespaceId, caller.principalId, "namespace.deleted")
        return toNamespace(updated)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, get, delete: remove }
  }),
  dependencies: [NamespacesRepo.Default, WorkItemsRepo.Default, AuditLog.Default, Authorization.Default, GatedPages.Default]
}) {}
