/**
 * AccessBindings (DESIGN §6): one Role granted to one principal on the Namespace or one exact
 * resource in it. Immutable: create and delete only.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { Forbidden, InvalidRequest, NotFound, ResourceConflict } from "@svc/core/errors"
import { type Caller, CurrentCaller, grantHeld, permission, type ResourceRef, resourceScope, restrictionReaches, visibleTo } from "@svc/core/iam"
import { BindingId, Ids, type NamespaceId, type RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import {
  authorizeNamespaceAdministration,
  isForeignKeyViolation,
  namespaceRef,
  type Page,
  requireNamespace
} from "./access.js"
import { findBindableRole } from "./roles.js"
import type { AccessBinding, BindableKind } from "./schemas.js"

interface BindingRow {
  readonly id: string
  readonly namespace_id: string
  readonly principal_id: string
  readonly role_id: string
  readonly resource_kind: string
  readonly resource_id: string
  readonly created_at: Date
}

const toBinding = (row: BindingRow): AccessBinding => ({
  id: row.id as AccessBinding["id"],
  namespaceId: row.namespace_id as NamespaceId,
  principalId: row.principal_id,
  roleId: row.role_id as RoleId,
  resource: { kind: row.resource_kind, id: row.resource_id },
  createdAt: row.created_at
})

const bindingRef = (namespaceId: string, bindingId: string) =>
  ({ kind: "iam_access_binding", id: bindingId, namespaceId }) as const

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

/**
 * The permissions of `permissions` the caller does not hold on `target` (a grant that covers
 * it, and no Restriction; the predicate of `decide`): one query, whatever the size of the Role.
 */
const missingPermissions = (caller: Caller, permissions: ReadonlyArray<string>, target: ResourceRef) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const principal = sql`${caller.principalId}`
    const held = sql`p.permission`
    const scope = resourceScope(sql, target)
    const rows = yield* sql<{ permission: string }>`
      SELECT p.permission FROM unnest(string_to_array(${permissions.join(",")}, ',')) AS p (permission)
      WHERE NOT ${grantHeld(sql, principal, held, scope)}
        OR ${restrictionReaches(sql, principal, held, scope)}
    `
    return rows.map((row) => row.permission)
  })

/** The tables of the binding targets whose rows exist today; other kinds are not checked yet. */
const targetTables: Partial<Record<ResourceRef["kind"], string>> = {
  iam_role: "roles",
  iam_access_binding: "access_bindings",
  secret: "secrets",
  preset: "presets",
  configuration: "configurations",
  agent: "agents",
  agent_revision: "agent_revisions"
}

/** Whether the target of a binding exists in its Namespace (kinds without a table yet: assumed). */
const targetExists = (target: ResourceRef) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = targetTables[target.kind]
    if (table === undefined || target.kind === "installation" || target.kind === "namespace") return true
    const rows = yield* sql`SELECT 1 FROM ${sql(table)} WHERE id = ${target.id} AND namespace_id = ${target.namespaceId}`
    return rows.length > 0
  })

export const createBinding = Effect.fn("IamAccessBindings.create")(function* (
  namespaceId: string,
  payload: {
    readonly principalId: string
    readonly roleId: string
    readonly resource: { readonly kind: BindableKind; readonly id: string }
  }
) {
  const caller = yield* CurrentCaller
  yield* authorize("iam_access_binding:create", namespaceRef(namespaceId))
  const target = yield* targetOf(namespaceId, payload.resource)
  // SPEC 4.7: creating a binding also needs `read` on the resource it names (404 otherwise).
  yield* authorize(permission(target.kind, "read"), target)
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const create = Effect.gen(function* () {
    const principals = yield* sql<{ kind: string; namespace_id: string | null }>`
      SELECT kind, namespace_id FROM principals
      WHERE id = ${payload.principalId} AND deleted_at IS NULL
      FOR SHARE
    `
    const principal = principals[0]
    if (principal === undefined) return yield* invalid("The principal does not exist.", "/principalId")
    if (principal.namespace_id !== null && principal.namespace_id !== namespaceId) {
      return yield* invalid("A Namespace-scoped principal can only be bound inside its own Namespace.", "/principalId")
    }
    const role = yield* findBindableRole(namespaceId, payload.roleId, "share")
    if (role === undefined) {
      return yield* invalid("The Role is not a built-in Namespace Role or a Role of this Namespace.", "/roleId")
    }
    if (!(yield* targetExists(target))) return yield* new NotFound({ message: "The resource does not exist." })
    // A binding must not hand out more than its creator holds on that resource.
    const missing = yield* missingPermissions(caller, role.permissions, target)
    if (missing.length > 0) {
      return yield* new Forbidden({
        message: `The caller cannot grant permissions it does not hold on the resource (${missing.slice(0, 3).join(", ")}).`
      })
    }
    // One binding per (principal, Role, resource): concurrent identical requests serialise here.
    const key = `${payload.principalId}|${payload.roleId}|${target.kind}|${payload.resource.id}`
    yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`
    const existing = yield* sql`
      SELECT 1 FROM access_bindings
      WHERE principal_id = ${payload.principalId} AND role_id = ${payload.roleId}
        AND resource_kind = ${target.kind} AND resource_id = ${payload.resource.id}
    `
    if (existing.length > 0) {
      return yield* new ResourceConflict({ message: "This principal already holds this Role on this resource." })
    }
    const id = BindingId.make()
    const rows = yield* sql<BindingRow>`
      INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id)
      VALUES (${id}, ${payload.principalId}, ${payload.roleId}, ${target.kind}, ${payload.resource.id}, ${namespaceId})
      RETURNING id, namespace_id, principal_id, role_id, resource_kind, resource_id, created_at
    `
    yield* recordAudit({
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
    return toBinding(rows[0]!)
  })
  return yield* sql.withTransaction(create).pipe(
    Effect.catchTag("SqlError", (error) =>
      isForeignKeyViolation(error)
        ? Effect.fail(new ResourceConflict({ message: "The Role or principal was removed while binding it." }))
        : Effect.die(error)
    )
  )
})

export const listBindings = Effect.fn("IamAccessBindings.list")(function* (namespaceId: string, page: Page) {
  const caller = yield* CurrentCaller
  yield* authorizeNamespaceAdministration(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<BindingRow>`
    SELECT b.id, b.namespace_id, b.principal_id, b.role_id, b.resource_kind, b.resource_id, b.created_at
    FROM access_bindings b
    WHERE b.namespace_id = ${namespaceId}
      AND ${page.after === undefined ? sql`TRUE` : sql`b.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "iam_access_binding:read", "iam_access_binding", { id: "b.id", namespaceId: "b.namespace_id" })}
    ORDER BY b.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toBinding)
})

export const getBinding = Effect.fn("IamAccessBindings.get")(function* (namespaceId: string, bindingId: string) {
  yield* authorize("iam_access_binding:read", bindingRef(namespaceId, bindingId))
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<BindingRow>`
    SELECT id, namespace_id, principal_id, role_id, resource_kind, resource_id, created_at
    FROM access_bindings WHERE id = ${bindingId} AND namespace_id = ${namespaceId}
  `.pipe(Effect.orDie)
  if (rows[0] === undefined) return yield* new NotFound({ message: "The AccessBinding does not exist." })
  return toBinding(rows[0])
})

export const deleteBinding = Effect.fn("IamAccessBindings.delete")(function* (namespaceId: string, bindingId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("iam_access_binding:delete", bindingRef(namespaceId, bindingId))
  const sql = yield* SqlClient.SqlClient
  const remove = Effect.gen(function* () {
    const rows = yield* sql<{ principal_id: string; role_id: string }>`
      DELETE FROM access_bindings WHERE id = ${bindingId} AND namespace_id = ${namespaceId}
      RETURNING principal_id, role_id
    `.pipe(Effect.orDie)
    const row = rows[0]
    if (row === undefined) return yield* new NotFound({ message: "The AccessBinding does not exist." })
    yield* recordAudit({
      kind: "iam.access-binding.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "iam_access_binding", id: bindingId },
      details: { principalId: row.principal_id, roleId: row.role_id }
    }).pipe(Effect.orDie)
  })
  yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})

