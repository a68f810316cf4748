import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { NamespaceId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  anonymous,
  apiTestLayer,
  auditKinds,
  expectData,
  expectError,
  seedAdmin,
  seedHuman,
  seedNamespace,
  seedServiceKey,
  send,
  TIMESTAMP,
  withKey
} from "./support/iamServer.js"

const SP_ID = /^sp_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("service principals", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("Installation-scoped: create, read, list, delete; a deleted principal's keys stop working at once", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("sp-admin@example.com")
        const created = expectData(yield* send(baseUrl, "POST", "/iam/service-principals", admin.headers, { name: "ci deploys" }), 201)
        expect(created).toEqual({ id: expect.stringMatching(SP_ID), name: "ci deploys", createdAt: expect.stringMatching(TIMESTAMP) })
        expect(expectData(yield* send(baseUrl, "GET", `/iam/service-principals/${created.id}`, admin.headers), 200)).toEqual(created)
        const listed = expectData(yield* send(baseUrl, "GET", "/iam/service-principals", admin.headers), 200)
        expect(listed).toContainEqual(created)

        // Give it a grant and a key, as issuance would.
        yield* bindRole(created.id, BuiltinRoles.installationAdmin.id, { kind: "installation" })
        const { key } = yield* insertServiceKey(created.id)
        expectData(yield* send(baseUrl, "GET", "/iam/service-principals", withKey(key)), 200)

        const deleted = yield* send(baseUrl, "DELETE", `/iam/service-principals/${created.id}`, admin.headers)
        expect(deleted.status).toBe(204)
        expectError(yield* send(baseUrl, "GET", "/iam/service-principals", withKey(key)), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "GET", `/iam/service-principals/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/iam/service-principals/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expect(expectData(yield* send(baseUrl, "GET", "/iam/service-principals", admin.headers), 200)).not.toContainEqual(created)
        const sql = yield* SqlClient.SqlClient
        const bindings = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM access_bindings WHERE principal_id = ${created.id}`
        expect(bindings[0]!.n).toBe(0)
        expect((yield* auditKinds(created.id)).map((row) => [row.kind, row.actor_principal_id])).toEqual([
          ["iam.service-principal.created", admin.principalId],
          ["iam.service-principal.deleted", admin.principalId]
        ])
      }))

    it.effect("Namespace-scoped: managed under its Namespace only", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("sp-ns-admin@example.com")
        const ns = yield* seedNamespace("sp-a")
        const other = yield* seedNamespace("sp-b")
        const path = `/namespaces/${ns}/iam/service-principals`
        const created = expectData(yield* send(baseUrl, "POST", path, admin.headers, { name: "robot" }), 201)
        expect(created).toEqual({ id: expect.stringMatching(SP_ID), name: "robot", namespaceId: ns, createdAt: expect.stringMatching(TIMESTAMP) })
        expect(expectData(yield* send(baseUrl, "GET", `${path}/${created.id}`, admin.headers), 200)).toEqual(created)
        expect(expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)).toEqual([created])
        // Not under another Namespace, nor at Installation scope.
        expectError(yield* send(baseUrl, "GET", `/namespaces/${other}/iam/service-principals/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/iam/service-principals/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expect(expectData(yield* send(baseUrl, "GET", "/iam/service-principals", admin.headers), 200)).not.toContainEqual(
          expect.objectContaining({ id: created.id })
        )
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${other}/iam/service-principals/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expect((yield* send(baseUrl, "DELETE", `${path}/${created.id}`, admin.headers)).status).toBe(204)
        expectError(yield* send(baseUrl, "GET", `${path}/${created.id}`, admin.headers), 404, "NOT_FOUND")
        // A deleted principal keeps its row for the audit trail; it no longer holds the Namespace.
        expect(expectData(yield* send(baseUrl, "DELETE", `/namespaces/${ns}`, admin.headers), 202).status).toBe("deleting")
        const missing = NamespaceId.make()
        expectError(yield* send(baseUrl, "POST", `/namespaces/${missing}/iam/service-principals`, admin.headers, { name: "x" }), 404, "NOT_FOUND")
      }))

    it.effect("bad bodies are 400; callers without administer get 401, 403 or 404", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("sp-bad@example.com")
        const ns = yield* seedNamespace("sp-bad")
        expectError(yield* send(baseUrl, "POST", "/iam/service-principals", admin.headers, { name: "", kind: "agent" }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/kind" },
          { code: "INVALID_VALUE", path: "/name" }
        ])
        expectError(yield* send(baseUrl, "POST", "/iam/service-principals", admin.headers, {}), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/name" }
        ])
        expectError(yield* send(baseUrl, "GET", "/iam/service-principals/prn_x", admin.headers), 400, "INVALID_REQUEST")
        const nobody = yield* seedHuman("sp-nobody@example.com")
        const nsAdmin = yield* seedHuman("sp-nsadmin@example.com")
        yield* bindRole(nsAdmin.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
        const nsKey = yield* seedServiceKey("sp-ns-key", ns)
        yield* bindRole(nsKey.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
        for (const path of ["/iam/service-principals", `/namespaces/${ns}/iam/service-principals`]) {
          expectError(yield* send(baseUrl, "POST", path, anonymous, { name: "x" }), 401, "UNAUTHENTICATED")
          expectError(yield* send(baseUrl, "GET", path, anonymous), 401, "UNAUTHENTICATED")
          expectError(yield* send(baseUrl, "POST", path, nsAdmin.headers, { name: "x" }), 403, "FORBIDDEN")
          expectError(yield* send(baseUrl, "POST", path, nsKey.headers, { name: "x" }), 403, "FORBIDDEN")
          expectError(yield* send(baseUrl, "GET", path, nsKey.headers), 403, "FORBIDDEN")
        }
        expectError(yield* send(baseUrl, "POST", "/iam/service-principals", nobody.headers, { name: "x" }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/service-principals`, nobody.headers, { name: "x" }), 404, "NOT_FOUND")
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM principals WHERE name = 'x'`
        expect(rows[0]!.n).toBe(0)
      }))
  })
})
