/**
 * AccessBinding rules of SPEC 2.16, 3 and 4.7 pinned one by one: bindings are immutable (no
 * update route), a removed Namespace's bindings are not readable or deletable through it, and
 * creating one needs `read` on the resource it names even when the creator holds every
 * permission of the Role there.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createAgentRow, createServicePrincipal } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedHuman, seedNamespace, send } from "./support/iamServer.js"

const bindingCount = (principalId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM access_bindings WHERE principal_id = ${principalId}`
    return rows[0]!.n
  })

describe("IAM AccessBinding rules", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a binding cannot be changed (405) and, once its Namespace is removed, reads and deletes are 404", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("bind-rules-admin@example.com")
        const ns = yield* seedNamespace("bind-rules")
        const principal = yield* createServicePrincipal("bind-rules", ns)
        const path = `/namespaces/${ns}/iam/access-bindings`
        const created = expectData(yield* send(baseUrl, "POST", path, admin.headers, {
          principalId: principal,
          roleId: BuiltinRoles.namespaceViewer.id,
          resource: { kind: "namespace", id: ns }
        }), 201)
        const one = `${path}/${created.id}`
        // SPEC 2.16: AccessBindings are immutable.
        for (const method of ["PATCH", "PUT"]) {
          expectError(yield* send(baseUrl, method, one, admin.headers, { roleId: BuiltinRoles.namespaceAdmin.id }), 405, "METHOD_NOT_ALLOWED")
        }
        expect(expectData(yield* send(baseUrl, "GET", one, admin.headers), 200)).toEqual(created)

        // SPEC 3: a removed Namespace keeps only an internal tombstone; reads return 404.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE namespaces SET status = 'deleted' WHERE id = ${ns}`
        expectError(yield* send(baseUrl, "GET", one, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", one, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", path, admin.headers), 404, "NOT_FOUND")
        expect(yield* bindingCount(principal)).toBe(1)
      }))

    it.effect("creating a binding needs read on the named resource even when the creator holds the Role's permissions there", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("bind-rules-read")
        const sql = yield* SqlClient.SqlClient
        const role = (permissions: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const id = RoleId.make()
            yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${id}, ${ns}, ${`r-${id}`}, ${permissions})`
            return id
          })
        const agent = (yield* createAgentRow(ns)).id
        const binder = yield* seedHuman("bind-rules-binder@example.com")
        yield* bindRole(binder.principalId, yield* role(["namespace:read", "iam_access_binding:create", "agent:deploy"]), { kind: "namespace", id: ns })
        const deployer = yield* role(["agent:deploy"])
        const target = yield* createServicePrincipal("bind-rules-target", ns)
        const bind = send(baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, binder.headers, {
          principalId: target,
          roleId: deployer,
          resource: { kind: "agent", id: agent }
        })
        // It holds agent:deploy on the Agent (so no escalation) but cannot read it.
        expectError(yield* bind, 404, "NOT_FOUND")
        expect(yield* bindingCount(target)).toBe(0)
        yield* bindRole(binder.principalId, yield* role(["agent:read"]), { kind: "agent", id: agent, namespaceId: ns })
        const created = expectData(yield* bind, 201)
        expect(created.resource).toEqual({ kind: "agent", id: agent })
        expect(yield* bindingCount(target)).toBe(1)
      }))
  })
})
