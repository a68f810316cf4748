import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { AgentId, CredentialSourceId, RoleId, ServiceAccountId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createAgentRow, createServicePrincipal } from "../../../testing/identity.js"
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
  TIMESTAMP
} from "./support/iamServer.js"

const BINDING_ID = /^bnd_[0-9a-f-]{36}$/

/** A custom Role written straight to the database (for setting up callers). */
const customRole = (namespaceId: string, name: string, permissions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${id}, ${namespaceId}, ${name}, string_to_array(${permissions.join(",")}, ','))`
    return id
  })

describe("IAM AccessBindings", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("an administrator binds a Role on the Namespace; the grant takes effect on the next request; deleting revokes it", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("bind-admin@example.com")
        const ns = yield* seedNamespace("bind-a")
        const member = yield* seedHuman("bind-member@example.com")
        const role = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/roles`, admin.headers, {
          name: "iam-reader",
          permissions: ["namespace:read", "iam_role:read"]
        }), 201)
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles/${role.id}`, member.headers), 404, "NOT_FOUND")
        const created = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, admin.headers, {
          principalId: member.principalId,
          roleId: role.id,
          resource: { kind: "namespace", id: ns }
        }), 201)
        expect(created).toEqual({
          id: expect.stringMatching(BINDING_ID),
          namespaceId: ns,
          principalId: member.principalId,
          roleId: role.id,
          resource: { kind: "namespace", id: ns },
          createdAt: expect.stringMatching(TIMESTAMP)
        })
        expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles/${role.id}`, member.headers), 200)
        const path = `/namespaces/${ns}/iam/access-bindings`
        expect(expectData(yield* send(baseUrl, "GET", `${path}/${created.id}`, admin.headers), 200)).toEqual(created)
        expect(expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)).toEqual([created])
        expectError(yield* send(baseUrl, "POST", path, admin.headers, {
          principalId: member.principalId,
          roleId: role.id,
          resource: { kind: "namespace", id: ns }
        }), 409, "RESOURCE_CONFLICT")
        expect((yield* send(baseUrl, "DELETE", `${path}/${created.id}`, admin.headers)).status).toBe(204)
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles/${role.id}`, member.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `${path}/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `${path}/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expect((yield* auditKinds(created.id)).map((row) => row.kind)).toEqual([
          "iam.access-binding.created",
          "iam.access-binding.deleted"
        ])
        // Exact resource bindings name a resource inside the Namespace.
        const agent = (yield* createAgentRow(ns)).id
        const onAgent = expectData(yield* send(baseUrl, "POST", path, admin.headers, {
          principalId: member.principalId,
          roleId: BuiltinRoles.namespaceViewer.id,
          resource: { kind: "agent", id: agent }
        }), 201)
        expect(onAgent.resource).toEqual({ kind: "agent", id: agent })
      }))

    it.effect("bad principals, Roles and resources are 400 with details; missing targets 404", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("bind-bad@example.com")
        const ns = yield* seedNamespace("bind-bad")
        const other = yield* seedNamespace("bind-bad-other")
        const local = yield* createServicePrincipal("local", ns)
        const foreign = yield* createServicePrincipal("foreign", other)
        const otherRole = expectData(yield* send(baseUrl, "POST", `/namespaces/${other}/iam/roles`, admin.headers, {
          name: "elsewhere",
          permissions: ["agent:read"]
        }), 201)
        const path = `/namespaces/${ns}/iam/access-bindings`
        const viewer = BuiltinRoles.namespaceViewer.id
        const bind = (body: unknown) => send(baseUrl, "POST", path, admin.headers, body)
        const nsResource = { kind: "namespace", id: ns }
        expectError(yield* bind({ principalId: local, roleId: viewer, resource: { kind: "galaxy", id: "x" } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/resource/kind" }
        ])
        expectError(yield* bind({ principalId: local, roleId: viewer, resource: { kind: "namespace", id: other } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/resource/id" }
        ])
        expectError(yield* bind({ principalId: local, roleId: viewer, resource: { kind: "agent", id: "agt_nope" } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/resource/id" }
        ])
        // An unknown principal and a principal of another Namespace get the same answer: the
        // caller must not learn that an id exists outside the Namespace it administers.
        const unknownPrincipal = yield* bind({ principalId: "sp_00000000-0000-4000-8000-000000000000", roleId: viewer, resource: nsResource })
        const foreignPrincipal = yield* bind({ principalId: foreign, roleId: viewer, resource: nsResource })
        for (const result of [unknownPrincipal, foreignPrincipal]) {
          expectError(result, 400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: "/principalId" }])
        }
        expect(foreignPrincipal.body.error).toEqual(unknownPrincipal.body.error)
        expect([...foreignPrincipal.headers.keys()].sort()).toEqual([...unknownPrincipal.headers.keys()].sort())
        expectError(yield* bind({ principalId: local, roleId: BuiltinRoles.installationAdmin.id, resource: nsResource }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/roleId" }
        ])
        expectError(yield* bind({ principalId: local, roleId: otherRole.id, resource: nsResource }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/roleId" }
        ])
        expectError(yield* bind({ principalId: local, roleId: viewer }), 400, "INVALID_REQUEST", [{ code: "REQUIRED", path: "/resource" }])
        expectError(yield* bind({ principalId: local, roleId: viewer, resource: { ...nsResource, extra: 1 } }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/resource/extra" }
        ])
        expectError(yield* bind({ principalId: local, roleId: viewer, resource: { kind: "iam_role", id: RoleId.make() } }), 404, "NOT_FOUND")
        // Service accounts and credential sources (issue 13): this Namespace's bind, others' and absent ones are 404.
        const account = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/service-accounts`, admin.headers, { name: "bindable" }), 201)
        const elsewhere = expectData(yield* send(baseUrl, "POST", `/namespaces/${other}/service-accounts`, admin.headers, { name: "elsewhere" }), 201)
        expectData(yield* bind({ principalId: local, roleId: viewer, resource: { kind: "service_account", id: account.id } }), 201)
        for (const id of [elsewhere.id, ServiceAccountId.make()]) {
          expectError(yield* bind({ principalId: local, roleId: viewer, resource: { kind: "service_account", id } }), 404, "NOT_FOUND")
        }
        expectError(yield* bind({ principalId: local, roleId: viewer, resource: { kind: "credential_source", id: CredentialSourceId.make() } }), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "POST", path, { ...admin.headers }, "[]"), 400, "INVALID_REQUEST")
        // A Namespace-scoped principal binds inside its own Namespace.
        expectData(yield* bind({ principalId: local, roleId: viewer, resource: nsResource }), 201)
        expectError(yield* send(baseUrl, "GET", `${path}/bnd_nope`, admin.headers), 400, "INVALID_REQUEST")
      }))

    it.effect("a binding never hands out more than its creator holds, and needs read on the target", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("bind-escalation")
        const delegate = yield* seedHuman("bind-delegate@example.com")
        const binder = yield* customRole(ns, "binder", ["namespace:read", "iam_access_binding:create", "iam_role:read"])
        yield* bindRole(delegate.principalId, binder, { kind: "namespace", id: ns })
        const target = yield* seedHuman("bind-target@example.com")
        const path = `/namespaces/${ns}/iam/access-bindings`
        const bind = (roleId: string, resource: unknown) =>
          send(baseUrl, "POST", path, delegate.headers, { principalId: target.principalId, roleId, resource })
        expectError(yield* bind(BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns }), 403, "FORBIDDEN")
        // The refused grant is an authorization denial, audited though its transaction rolled back (SPEC 6).
        const denials = (yield* auditKinds(ns)).filter((row) => row.kind === "authorization.denied")
        expect(denials.map((row) => [row.actor_principal_id, row.details])).toEqual([[
          delegate.principalId,
          { permission: "iam_access_binding:create", roleId: BuiltinRoles.namespaceAdmin.id, reason: "grant-not-held" }
        ]])
        expectError(yield* bind(binder, { kind: "agent", id: AgentId.make() }), 404, "NOT_FOUND")
        // Its own Role, on the Namespace: it holds every permission of it.
        expectData(yield* bind(binder, { kind: "namespace", id: ns }), 201)
        // Listing needs administer on the Installation.
        expectError(yield* send(baseUrl, "GET", path, delegate.headers), 403, "FORBIDDEN")
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM access_bindings WHERE principal_id = ${target.principalId}`
        expect(rows[0]!.n).toBe(1)
      }))

    it.effect("concurrent identical bindings make one; a Role deleted while it is being bound leaves no dangling binding", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("bind-race@example.com")
        const ns = yield* seedNamespace("bind-race")
        const path = `/namespaces/${ns}/iam/access-bindings`
        const principal = yield* createServicePrincipal("race", ns)
        const body = { principalId: principal, roleId: BuiltinRoles.namespaceViewer.id, resource: { kind: "namespace", id: ns } }
        const same = yield* Effect.all(Array.from({ length: 8 }, () => send(baseUrl, "POST", path, admin.headers, body)), { concurrency: "unbounded" })
        expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409])
        const sql = yield* SqlClient.SqlClient
        for (let round = 0; round < 5; round++) {
          const role = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/roles`, admin.headers, {
            name: `race-${round}`,
            permissions: ["agent:read"]
          }), 201)
          const [bound, deleted] = yield* Effect.all([
            send(baseUrl, "POST", path, admin.headers, { ...body, roleId: role.id }),
            send(baseUrl, "DELETE", `/namespaces/${ns}/iam/roles/${role.id}`, admin.headers)
          ], { concurrency: "unbounded" })
          // Either the binding won (and the delete saw it: 409) or the delete won (and the
          // binding found no Role: 400, or lost the race to its foreign key: 409).
          expect([[201, 409], [400, 204], [409, 204]]).toContainEqual([bound.status, deleted.status])
          const dangling = yield* sql`SELECT 1 FROM access_bindings b LEFT JOIN roles r ON r.id = b.role_id WHERE r.id IS NULL`
          expect(dangling).toEqual([])
        }
      }))

    it.effect("a Namespace administrator's key manages IAM inside its own Namespace, and only there", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("bind-nskey")
        const other = yield* seedNamespace("bind-nskey-other")
        const key = yield* seedServiceKey("bind-nskey", ns)
        yield* bindRole(key.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
        const robot = yield* createServicePrincipal("bind-nskey-robot", ns)
        const role = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/roles`, key.headers, {
          name: "robot",
          permissions: ["agent:read", "agent:deploy"]
        }), 201)
        const binding = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, key.headers, {
          principalId: robot,
          roleId: role.id,
          resource: { kind: "agent", id: (yield* createAgentRow(ns)).id }
        }), 201)
        expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/access-bindings/${binding.id}`, key.headers), 200)
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/access-bindings`, key.headers), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "POST", `/namespaces/${other}/iam/roles`, key.headers, { name: "x", permissions: ["agent:read"] }), 403, "FORBIDDEN")
        expect((yield* send(baseUrl, "DELETE", `/namespaces/${ns}/iam/access-bindings/${binding.id}`, key.headers)).status).toBe(204)
        expect((yield* send(baseUrl, "DELETE", `/namespaces/${ns}/iam/roles/${role.id}`, key.headers)).status).toBe(204)
      }))

    it.effect("401, 403 and 404 on every binding route", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("bind-authz")
        const other = yield* seedNamespace("bind-authz-other")
        const nobody = yield* seedHuman("bind-nobody@example.com")
        const foreignKey = yield* seedServiceKey("bind-foreign", other)
        const body = { principalId: nobody.principalId, roleId: BuiltinRoles.namespaceViewer.id, resource: { kind: "namespace", id: ns } }
        const path = `/namespaces/${ns}/iam/access-bindings`
        const one = `${path}/bnd_00000000-0000-4000-8000-000000000000`
        for (const [method, route] of [["POST", path], ["GET", path], ["GET", one], ["DELETE", one]] as const) {
          const payload = method === "POST" ? body : undefined
          expectError(yield* send(baseUrl, method, route, anonymous, payload), 401, "UNAUTHENTICATED")
          expectError(yield* send(baseUrl, method, route, nobody.headers, payload), 404, "NOT_FOUND")
          expectError(yield* send(baseUrl, method, route, foreignKey.headers, payload), 403, "FORBIDDEN")
        }
      }))
  })
})
