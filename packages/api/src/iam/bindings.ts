/**
 * AccessBindings (DESIGN §6): one Role granted to one principal on the Namespace or one exact
 * resource in it. Immutable: create and delete only.
 */
import { SqlClient } from "@effect/sql"
import type { AccessBinding, BindableKind, PageParams } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { type BindingRow, BindingsRepo, PrincipalsRepo, RolesRepo } from "@svc/core/db"
import { Forbidden, InvalidRequest, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, permission, type ResourceRef, visibleTo } from "@svc/core/iam"
import { BindingId, Ids, type NamespaceId, type RoleId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages } from "../auth/gatedPage.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { isForeignKeyViolation, namespaceRef, pageOf } from "./access.js"
import { bindingRef, namespaceAdministrationGate } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

const toBinding = (row: BindingRow): AccessBinding => ({
  id: row.id,
  namespaceId: row.namespace_id,
  principalId: row.principal_id,
  roleId: row.role_id,
  resource: { kind: row.resource_kind, id: row.resource_id },
  createdAt: row.created_at
})

const notFound = () => new NotFound({ message: "The AccessBinding does not exist." })

/** The identifier schema of each bindable kind inside a Namespace. */
const idSchemaOf: Record<Exclude<BindableKind, "namespace">, { readonly isValid: (value: unknown) => boolean }> = {
  agent: Ids.agent,
  agent_revision: Ids.revision,
  configuration: Ids.configuration,
  preset: Ids.preset,
  secret: Ids.secret,
  service_account: Ids.serviceAccount,
  credential_source: Ids.credentialSource,
  iam_role: Ids.role,
  iam_access_binding: Ids.binding
}

const invalid = (message: string, path: string, code: "INVALID_VALUE" | "INVALID_FORMAT" = "INVALID_VALUE") =>
  new InvalidRequest({ message, details: [{ code, path }] })

/** The exact resource a binding names: the path's Namespace, or a well-formed id inside it. */
const targetOf = (
  namespaceId: string,
  resource: { readonly kind: BindableKind; readonly id: string }
): Effect.Effect<ResourceRef, InvalidRequest> => {
  if (resource.kind === "namespace") {
    return resource.id === namespaceId
      ? Effect.succeed(namespaceRef(namespaceId))
      : Effect.fail(invalid("A Namespace binding must name the Namespace of the path.", "/resource/id"))
  }
  return idSchemaOf[resource.kind].isValid(resource.id)
    ? Effect.succeed({ kind: resource.kind, id: resource.id, namespaceId })
    : Effect.fail(invalid(`The resource id is not a ${resource.kind} id.`, "/resource/id", "INVALID_FORMAT"))
}

export class IamAccessBindings extends Effect.Service<IamAccessBindings>()("@svc/api/IamAccessBindings", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const bindings = yield* BindingsRepo
    const principals = yield* PrincipalsRepo
    const roles = yield* RolesRepo
    const audit = yield* AuditLog
    const authorization = yield* Authorization
    const { authorize } = authorization
    const namespaces = yield* NamespaceGuard
    const pages = yield* GatedPages

    const create = exportedFn("IamAccessBindings.create")(function* (
      namespaceId: NamespaceId,
      payload: {
        readonly principalId: string
        readonly roleId: RoleId
        readonly resource: { readonly kind: BindableKind; readonly id: string }
      }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("iam_access_binding:create", namespaceRef(namespaceId))
      const target = yield* targetOf(namespaceId, payload.resource)
      // SPEC 4.7: creating a binding also needs `read` on the resource it names (404 otherwise).
      yield* authorize(permission(target.kind, "read"), target)
      yield* namespaces.requireLive(namespaceId)
      const write = Effect.gen(function* () {
        // FOR SHARE against DELETE /namespaces: a Namespace being deleted takes no new binding (409).
        yield* namespaces.lockForWrite(namespaceId)
        const principal = yield* principals.lockLive(payload.principalId)
        // A principal of another Namespace is answered exactly as an unknown one: a Namespace
        // administrator must not learn which ids exist elsewhere (DESIGN §6).
        if (Option.isNone(principal) || (principal.value.namespace_id !== null && principal.value.namespace_id !== namespaceId)) {
          return yield* invalid("No principal with this id can be bound in this Namespace.", "/principalId")
        }
        const role = yield* roles.findBindable({ id: payload.roleId, namespace_id: namespaceId }, "share")
        if (Option.isNone(role)) {
          return yield* invalid("The Role is not a built-in Namespace Role or a Role of this Namespace.", "/roleId")
        }
        if (!(yield* bindings.targetExists(target))) return yield* new NotFound({ message: "The resource does not exist." })
        // A binding must not hand out more than its creator holds on that resource.
        const missing = yield* bindings.missingPermissions(caller.principalId, role.value.permissions, target)
        if (missing.length > 0) {
          return yield* new Forbidden({
            message: `The caller cannot grant permissions it does not hold on the resource (${missing.slice(0, 3).join(", ")}).`
          })
        }
        // One binding per (principal, Role, resource): concurrent identical requests serialise here.
        const identity = {
          principal_id: payload.principalId,
          role_id: payload.roleId,
          resource_kind: target.kind,
          resource_id: payload.resource.id
        }
        yield* bindings.lockIdentity(identity)
        if (yield* bindings.exists(identity)) {
          return yield* new ResourceConflict({ message: "This principal already holds this Role on this resource." })
        }
        const id = BindingId.make()
        const row = yield* bindings.insert({ id, namespace_id: namespaceId, ...identity })
        yield* audit.record({
          kind: "iam.access-binding.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "iam_access_binding", id },
          details: {
            principalId: payload.principalId,
            roleId: payload.roleId,
            resourceKind: target.kind,
            resourceId: payload.resource.id
          }
        })
        return toBinding(row)
      })
      return yield* sql.withTransaction(write).pipe(
        Effect.catchTags({
          SqlError: (error) =>
            isForeignKeyViolation(error)
              ? Effect.fail(new ResourceConflict({ message: "The Role or principal was removed while binding it." }))
              : Effect.die(error),
          ParseError: Effect.die,
          NoSuchElementException: Effect.die
        }),
        // SPEC 6: a refused grant is an authorization denial like any other; it is recorded after
        // the rollback, so it outlives the transaction that refused it.
        Effect.tapErrorTag("Forbidden", () =>
          audit.record({
            kind: "authorization.denied",
            outcome: "denied",
            actorPrincipalId: caller.principalId,
            namespaceId,
            resource: { kind: target.kind, id: payload.resource.id },
            details: { permission: "iam_access_binding:create", roleId: payload.roleId, reason: "grant-not-held" }
          }).pipe(Effect.orDie))
      )
    })

    const list = exportedFn("IamAccessBindings.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "iam_access_binding:read", "iam_access_binding", {
        id: "b.id",
        namespaceId: "b.namespace_id"
      })
      const rows = yield* pages.page({ ...namespaceAdministrationGate(sql, namespaceId), page: bindings.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible) })
      return rows.map(toBinding)
    })

    const get = exportedFn("IamAccessBindings.get")(function* (namespaceId: NamespaceId, bindingId: BindingId) {
      yield* authorize("iam_access_binding:read", bindingRef(namespaceId, bindingId))
      // A removed Namespace's bindings outlive its tombstone; through it they are not found (SPEC 3).
      yield* namespaces.requireLive(namespaceId)
      const row = yield* bindings.find({ id: bindingId, namespace_id: namespaceId })
      return yield* Option.match(row, { onNone: () => Effect.fail(notFound()), onSome: (r) => Effect.succeed(toBinding(r)) })
    })

    const remove = exportedFn("IamAccessBindings.delete")(function* (namespaceId: NamespaceId, bindingId: BindingId) {
      const caller = yield* CurrentCaller
      yield* authorize("iam_access_binding:delete", bindingRef(namespaceId, bindingId))
      yield* namespaces.requireLive(namespaceId)
      const write = Effect.gen(function* () {
        const row = yield* bindings.remove({ id: bindingId, namespace_id: namespaceId })
        if (Option.isNone(row)) return yield* notFound()
        yield* audit.record({
          kind: "iam.access-binding.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "iam_access_binding", id: bindingId },
          details: { principalId: row.value.principal_id, roleId: row.value.role_id }
        }).pipe(Effect.orDie)
      })
      yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, get, delete: remove }
  }),
  dependencies: [
    BindingsRepo.Default,
    PrincipalsRepo.Default,
    RolesRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    NamespaceGuard.Default,
    GatedPages.Default
  ]
}) {}
