/**
 * Which resource an IAM call is about (DESIGN §10 `Policy`), and the list authorization SPEC 4.7
 * gives every IAM list.
 */
import type { SqlClient } from "@effect/sql"
import { Installation, type ResourceRef } from "@svc/core/iam"
import type { NamespaceId } from "@svc/core/schema"
import { Effect } from "effect"
import type { Authorization } from "../auth/authorize.js"
import { inNamespace, type PageGate } from "../auth/gatedPage.js"
import type { NamespaceGuard } from "../namespaces/guard.js"
import { namespaceRef } from "./access.js"

export const roleRef = (namespaceId: string, roleId: string): ResourceRef =>
  ({ kind: "iam_role", id: roleId, namespaceId })

export const bindingRef = (namespaceId: string, bindingId: string): ResourceRef =>
  ({ kind: "iam_access_binding", id: bindingId, namespaceId })

/**
 * SPEC 4.7 list authorization: `read` on the Namespace first (404 when the caller cannot see
 * it, so nothing leaks), then `administer` on the Installation (403), then the Namespace must
 * exist. Built from the services a feature took once.
 */
export const namespaceAdministration = (authorization: Authorization, namespaces: NamespaceGuard) =>
  (namespaceId: NamespaceId) =>
    Effect.gen(function* () {
      yield* authorization.authorize("namespace:read", namespaceRef(namespaceId))
      yield* authorization.authorize("installation:administer", Installation)
      yield* namespaces.requireLive(namespaceId)
    })

/** The same SPEC 4.7 list authorization, as the gate of a one-statement page (`GatedPages`). */
export const namespaceAdministrationGate = (sql: SqlClient.SqlClient, namespaceId: NamespaceId) => ({
  ...inNamespace(sql, namespaceId),
  gates: [
    ...inNamespace(sql, namespaceId).gates,
    { permission: "installation:administer", resource: Installation }
  ] satisfies ReadonlyArray<PageGate>
})
