/**
 * Namespace Roles (DESIGN §6): immutable sets of Namespace-level permissions. A Namespace lists
 * its own custom Roles and the built-in Namespace Roles (which every Namespace may bind).
 */
import { SqlClient } from "@effect/sql"
import type { PageParams, Role } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { BindingsRepo, type RoleRow, RolesRepo } from "@svc/core/db"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { type NamespaceId, RoleId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages } from "../auth/gatedPage.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { builtinRoleNames, isUniqueViolation, namespaceRef, pageOf } from "./access.js"
import { namespaceAdministrationGate, roleRef } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

const toRole = (row: RoleRow): Role => ({
  id: row.id,
  namespaceId: row.namespace_id,
  name: row.name,
  permissions: row.permissions,
  builtin: row.builtin,
  createdAt: row.created_at
})

const notFound = () => new NotFound({ message: "The Role does not exist." })

export class IamRoles extends Effect.Service<IamRoles>()("@svc/api/IamRoles", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const roles = yield* RolesRepo
    const bindings = yield* BindingsRepo
    const audit = yield* AuditLog
    const authorization = yield* Authorization
    const { authorize } = authorization
    const namespaces = yield* NamespaceGuard
    const pages = yield* GatedPages

    const create = exportedFn("IamRoles.create")(function* (
      namespaceId: NamespaceId,
      payload: { readonly name: string; readonly permissions: ReadonlyArray<string> }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("iam_role:create", namespaceRef(namespaceId))
      yield* namespaces.requireLive(namespaceId)
      if (builtinRoleNames.has(payload.name)) {
        return yield* new ResourceConflict({ message: "A built-in Role already has this name." })
      }
      const permissions = [...new Set(payload.permissions)]
      const id = RoleId.make()
      const insert = Effect.gen(function* () {
        // FOR SHARE against DELETE /namespaces: a Namespace being deleted takes no new Role (409).
        yield* namespaces.lockForWrite(namespaceId)
        const row = yield* roles.insert({ id, namespace_id: namespaceId, name: payload.name, permissions })
        yield* audit.record({
          kind: "iam.role.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "iam_role", id },
          details: { permissions }
        })
        return toRole(row)
      })
      return yield* sql.withTransaction(insert).pipe(
        Effect.catchTags({
          SqlError: (error) =>
            isUniqueViolation(error)
              ? Effect.fail(new ResourceConflict({ message: "A Role with this name already exists in the Namespace." }))
              : Effect.die(error),
          ParseError: Effect.die,
          NoSuchElementException: Effect.die
        })
      )
    })

    const list = exportedFn("IamRoles.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "iam_role:read", "iam_role", { id: "r.id", namespaceId: "scope.ns" })
      const rows = yield* pages.page({ ...namespaceAdministrationGate(sql, namespaceId), page: roles.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible) })
      return rows.map(toRole)
    })

    const get = exportedFn("IamRoles.get")(function* (namespaceId: NamespaceId, roleId: RoleId) {
      yield* authorize("iam_role:read", roleRef(namespaceId, roleId))
      yield* namespaces.requireLive(namespaceId)
      const row = yield* roles.findBindable({ id: roleId, namespace_id: namespaceId })
      return yield* Option.match(row, { onNone: () => Effect.fail(notFound()), onSome: (r) => Effect.succeed(toRole(r)) })
    })

    const remove = exportedFn("IamRoles.delete")(function* (namespaceId: NamespaceId, roleId: RoleId) {
      const caller = yield* CurrentCaller
      yield* authorize("iam_role:delete", roleRef(namespaceId, roleId))
      yield* namespaces.requireLive(namespaceId)
      const write = Effect.gen(function* () {
        // The row lock orders this delete against a concurrent binding (whose foreign key check
        // takes a share lock on the Role): one of them sees the other's outcome.
        const row = yield* roles.findBindable({ id: roleId, namespace_id: namespaceId }, "update")
        if (Option.isNone(row)) return yield* notFound()
        if (row.value.builtin) return yield* new ResourceConflict({ message: "Built-in Roles cannot be deleted." })
        if (yield* bindings.isRoleReferenced(roleId)) {
          return yield* new ResourceConflict({ message: "The Role is referenced by an AccessBinding; remove the bindings first." })
        }
        yield* roles.remove(roleId)
        yield* audit.record({
          kind: "iam.role.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "iam_role", id: roleId }
        }).pipe(Effect.orDie)
      })
      yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, get, delete: remove }
  }),
  dependencies: [RolesRepo.Default, BindingsRepo.Default, AuditLog.Default, Authorization.Default, NamespaceGuard.Default, GatedPages.Default]
}) {}

