/**
 * Service principals for automation (DESIGN §6, beyond SPEC): Installation-scoped or scoped to
 * one Namespace. Managing them needs `administer` on the Installation (keys for them need it too,
 * SPEC 5.5); the Namespace-scoped ones also need `read` on their Namespace.
 */
import { SqlClient } from "@effect/sql"
import type { PageParams, ServicePrincipal } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { BindingsRepo, PrincipalsRepo, type ServicePrincipalRow } from "@svc/core/db"
import { NotFound } from "@svc/core/errors"
import { CurrentCaller, Installation } from "@svc/core/iam"
import { type NamespaceId, ServicePrincipalId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages } from "../auth/gatedPage.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { pageOf } from "./access.js"
import { namespaceAdministration, namespaceAdministrationGate } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

const toServicePrincipal = (row: ServicePrincipalRow): ServicePrincipal => ({
  id: row.id,
  name: row.name,
  ...(row.namespace_id === null ? {} : { namespaceId: row.namespace_id }),
  createdAt: row.created_at
})

/** null: Installation scope. */
type Scope = NamespaceId | null

const notFound = () => new NotFound({ message: "The service principal does not exist." })

export class IamServicePrincipals extends Effect.Service<IamServicePrincipals>()("@svc/api/IamServicePrincipals", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const principals = yield* PrincipalsRepo
    const bindings = yield* BindingsRepo
    const audit = yield* AuditLog
    const authorization = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const authorizeAdministration = namespaceAdministration(authorization, namespaces)
    const pages = yield* GatedPages

    const authorizeScope = (scope: Scope) =>
      scope === null ? authorization.authorize("installation:administer", Installation) : authorizeAdministration(scope)

    const create = exportedFn("ServicePrincipals.create")(function* (scope: Scope, name: string) {
      const caller = yield* CurrentCaller
      yield* authorizeScope(scope)
      const id = ServicePrincipalId.make()
      const insert = Effect.gen(function* () {
        // FOR SHARE against DELETE /namespaces: a Namespace being deleted takes no new principal (409).
        if (scope !== null) yield* namespaces.lockForWrite(scope)
        const row = yield* principals.insertService({ id, namespace_id: scope, name })
        yield* audit.record({
          kind: "iam.service-principal.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId: scope,
          resource: { kind: "service_principal", id }
        })
        return toServicePrincipal(row)
      })
      return yield* sql.withTransaction(insert).pipe(
        Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die, NoSuchElementException: Effect.die })
      )
    })

    const list = exportedFn("ServicePrincipals.list")(function* (scope: Scope, params: PageParams) {
      const page = pageOf(params)
      const query = principals.pageService({ namespace_id: scope, after: page.after, limit: page.limit })
      const rows = yield* pages.page(scope === null
        ? { gates: [{ permission: "installation:administer", resource: Installation }], parentLive: sql`TRUE`, missing: notFound, page: query }
        : { ...namespaceAdministrationGate(sql, scope), page: query })
      return rows.map(toServicePrincipal)
    })

    const get = exportedFn("ServicePrincipals.get")(function* (scope: Scope, id: ServicePrincipalId) {
      yield* authorizeScope(scope)
      const row = yield* principals.findService({ id, namespace_id: scope })
      return yield* Option.match(row, {
        onNone: () => Effect.fail(notFound()),
        onSome: (r) => Effect.succeed(toServicePrincipal(r))
      })
    })

    /**
     * Marks the principal deleted (its keys stop working at once: authentication requires a live
     * principal) and removes its AccessBindings, in one transaction with the audit record.
     */
    const remove = exportedFn("ServicePrincipals.delete")(function* (scope: Scope, id: ServicePrincipalId) {
      const caller = yield* CurrentCaller
      yield* authorizeScope(scope)
      const write = Effect.gen(function* () {
        const row = yield* principals.markServiceDeleted({ id, namespace_id: scope })
        if (Option.isNone(row)) return yield* notFound()
        const removedBindings = yield* bindings.removeForPrincipal(id)
        yield* audit.record({
          kind: "iam.service-principal.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId: scope,
          resource: { kind: "service_principal", id },
          details: { removedBindings }
        }).pipe(Effect.orDie)
      })
      yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, get, delete: remove }
  }),
  dependencies: [PrincipalsRepo.Default, BindingsRepo.Default, AuditLog.Default, Authorization.Default, NamespaceGuard.Default, GatedPages.Default]
}) {}
