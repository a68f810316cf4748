/**
 * IAM writes into a Namespace that is going away (SPEC 3 is silent on IAM; docs/decisions/iam.md):
 * creating a Role, an AccessBinding or a Namespace-scoped service principal in a `deleting`
 * Namespace is refused exactly as a Secret is (409 RESOURCE_CONFLICT "The Namespace is being
 * deleted."), and in a removed one it is 404; nothing is written either way.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import { createServicePrincipal } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

/** Everything IAM (and a Secret) a Namespace holds, counted. */
const held = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ roles: number; bindings: number; principals: number; secrets: number }>`
      SELECT (SELECT count(*)::int FROM roles WHERE namespace_id = ${namespaceId}) AS roles,
        (SELECT count(*)::int FROM access_bindings WHERE namespace_id = ${namespaceId}) AS bindings,
        (SELECT count(*)::int FROM principals WHERE namespace_id = ${namespaceId}) AS principals,
        (SELECT count(*)::int FROM secrets WHERE namespace_id = ${namespaceId}) AS secrets
    `
    return rows[0]!
  })

describe("IAM creation in a Namespace being deleted", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("Roles, AccessBindings and service principals: 409 while deleting (as Secrets), 404 once removed; nothing written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("iam-deleting@example.com")
        const ns = yield* seedNamespace("iam-deleting")
        const principal = yield* createServicePrincipal("iam-deleting-target", ns)
        const writes = [
          { path: "secrets", body: { name: "s", value: "v" } },
          { path: "iam/roles", body: { name: "custom", permissions: ["secret:read"] } },
          {
            path: "iam/access-bindings",
            body: { principalId: principal, roleId: BuiltinRoles.namespaceViewer.id, resource: { kind: "namespace", id: ns } }
          },
          { path: "iam/service-principals", body: { name: "robot" } }
        ]
        const before = yield* held(ns)
        expect(before).toEqual({ roles: 0, bindings: 0, principals: 1, secrets: 0 })

        yield* sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${ns}`
        for (const write of writes) {
          const refused = yield* send(baseUrl, "POST", `/namespaces/${ns}/${write.path}`, admin.headers, write.body)
          expectError(refused, 409, "RESOURCE_CONFLICT")
          expect(refused.body.error.message).toBe("The Namespace is being deleted.")
        }
        expect(yield* held(ns)).toEqual(before)

        yield* sql`UPDATE namespaces SET status = 'deleted' WHERE id = ${ns}`
        for (const write of writes) {
          expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/${write.path}`, admin.headers, write.body), 404, "NOT_FOUND")
        }
        expect(yield* held(ns)).toEqual(before)
      }))
  })
})
