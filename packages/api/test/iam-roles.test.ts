import { describe, expect, it } from "@effect/vitest"
import { BuiltinRoles } from "@svc/core/iam"
import { NamespaceId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createServicePrincipal } from "../../../testing/identity.js"
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

const ROLE_ID = /^role_[0-9a-f-]{36}$/

describe("IAM Roles", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("an Installation administrator creates, reads, lists and deletes a custom Role; both changes are audited", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("roles-admin@example.com")
        const ns = yield* seedNamespace("roles-a")
        const created = expectData(
          yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/roles`, admin.headers, {
            name: "agent-reader",
            permissions: ["agent:read", "agent_revision:read", "agent:read"]
          }),
          201
        )
        expect(created).toEqual({
          id: expect.stringMatching(ROLE_ID),
          namespaceId: ns,
          name: "agent-reader",
          permissions: ["agent:read", "agent_revision:read"],
          builtin: false,
          createdAt: expect.stringMatching(TIMESTAMP)
        })
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles/${created.id}`, admin.headers), 200)).toEqual(created)
        const listed = expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles`, admin.headers), 200)
        expect(listed.map((role: { name: string }) => role.name).sort()).toEqual(["agent-reader", "namespace-admin", "namespace-editor", "namespace-viewer"])
        expect(listed.find((role: { builtin: boolean }) => role.builtin)).toMatchObject({ namespaceId: null })
        // Keyset pages.
        const first = expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles?limit=2`, admin.headers), 200)
        const rest = expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles?limit=10&after=${first[1].id}`, admin.headers), 200)
        expect([...first, ...rest]).toEqual(listed)

        const deleted = yield* send(baseUrl, "DELETE", `/namespaces/${ns}/iam/roles/${created.id}`, admin.headers)
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/iam/roles/${created.id}`, admin.headers), 404, "NOT_FOUND")
        const audit = yield* auditKinds(created.id)
        expect(audit.map((row) => [row.kind, row.actor_principal_id])).toEqual([
          ["iam.role.created", admin.principalId],
          ["iam.role.deleted", admin.principalId]
        ])
      }))

    it.effect("bad bodies are 400 INVALID_REQUEST with a detail per problem, and nothing is written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("roles-bad@example.com")
        const ns = yield* seedNamespace("roles-bad")
        const path = `/namespaces/${ns}/iam/roles`
        const bad = yield* send(baseUrl, "POST", path, admin.headers, {
          name: " padded",
          permissions: ["agent:read", "installation:administer", "namespace:create", "agent:fly", "nothing", "agent_revision:delete"],
          extra: true
        })
        expectError(bad, 400, "INVALID_REQUEST")
        expect(bad.body.error.details).toEqual(expect.arrayContaining([
          { code: "INVALID_FORMAT", path: "/name" },
          { code: "INVALID_VALUE", path: "/permissions/1" },
          { code: "INVALID_VALUE", path: "/permissions/2" },
          { code: "INVALID_VALUE", path: "/permissions/3" },
          { code: "INVALID_VALUE", path: "/permissions/4" },
          { code: "INVALID_VALUE", path: "/permissions/5" },
          { code: "UNKNOWN_FIELD", path: "/extra" }
        ]))
        expect(bad.body.error.details).toHaveLength(7)
        expectError(yield* send(baseUrl, "POST", path, admin.headers, { permissions: [] }), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/name" },
          { code: "INVALID_VALUE", path: "/permissions" }
        ])
        expectError(yield* send(baseUrl, "POST", path, admin.headers, { name: "x".repeat(201), permissions: ["agent:read"] }), 400, "INVALID_REQUEST", [
          { code: "TOO_LONG", path: "/name" }
        ])
        expectError(yield* send(baseUrl, "POST", path, admin.headers, "{not json"), 400, "INVALID_REQUEST")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/iam/roles/not-a-role`, admin.headers), 400, "INVALID_REQUEST")
        expectError(yield* send(baseUrl, "GET", `${path}?limit=0`, admin.headers), 400, "INVALID_REQUEST")
        const listed = expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)
        expect(listed.filter((role: { builtin: boolean }) => !role.builtin)).toEqual([])
      }))

    it.effect("duplicate names, built-in names, referenced and built-in Roles are 409 RESOURCE_CONFLICT; Roles are immutable", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("roles-conflict@example.com")
        const ns = yield* seedNamespace("roles-conflict")
        const other = yield* seedNamespace("roles-conflict-other")
        const path = `/namespaces/${ns}/iam/roles`
        const role = expectData(yield* send(baseUrl, "POST", path, admin.headers, { name: "dup", permissions: ["secret:read"] }), 201)
        expectError(yield* send(baseUrl, "POST", path, admin.headers, { name: "dup", permissions: ["agent:read"] }), 409, "RESOURCE_CONFLICT")
        expectError(yield* send(baseUrl, "POST", path, admin.headers, { name: "namespace-admin", permissions: ["agent:read"] }), 409, "RESOURCE_CONFLICT")
        // The same name in another Namespace is another Role.
        expectData(yield* send(baseUrl, "POST", `/namespaces/${other}/iam/roles`, admin.headers, { name: "dup", permissions: ["agent:read"] }), 201)
        // Another Namespace's Role is not found under this one.
        expectError(yield* send(baseUrl, "GET", `/namespaces/${other}/iam/roles/${role.id}`, admin.headers), 404, "NOT_FOUND")

        const sp = yield* createServicePrincipal("bound", ns)
        const binding = expectData(
          yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, admin.headers, {
            principalId: sp,
            roleId: role.id,
            resource: { kind: "namespace", id: ns }
          }),
          201
        )
        expectError(yield* send(baseUrl, "DELETE", `${path}/${role.id}`, admin.headers), 409, "RESOURCE_CONFLICT")
        expect((yield* send(baseUrl, "DELETE", `/namespaces/${ns}/iam/access-bindings/${binding.id}`, admin.headers)).status).toBe(204)
        expect((yield* send(baseUrl, "DELETE", `${path}/${role.id}`, admin.headers)).status).toBe(204)

        expectError(yield* send(baseUrl, "DELETE", `${path}/${BuiltinRoles.namespaceViewer.id}`, admin.headers), 409, "RESOURCE_CONFLICT")
        // installation-admin is not a Role of any Namespace.
        expectError(yield* send(baseUrl, "GET", `${path}/${BuiltinRoles.installationAdmin.id}`, admin.headers), 404, "NOT_FOUND")
        const patched = yield* send(baseUrl, "PATCH", `${path}/${BuiltinRoles.namespaceViewer.id}`, admin.headers, { name: "x" })
        expectError(patched, 405, "METHOD_NOT_ALLOWED")
      }))

    it.effect("401 anonymous, 404 for a hidden or missing Namespace, 403 for another Namespace's key or a missing grant", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("roles-authz@example.com")
        const nobody = yield* seedHuman("roles-nobody@example.com")
        const ns = yield* seedNamespace("roles-authz")
        const other = yield* seedNamespace("roles-authz-other")
        const foreignKey = yield* seedServiceKey("foreign", other)
        const body = { name: "r", permissions: ["agent:read"] }
        const path = `/namespaces/${ns}/iam/roles`
        expectError(yield* send(baseUrl, "POST", path, anonymous, body), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "GET", path, anonymous), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", path, nobody.headers, body), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", path, nobody.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "POST", path, foreignKey.headers, body), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", path, foreignKey.headers), 403, "FORBIDDEN")
        const missing = NamespaceId.make()
        expectError(yield* send(baseUrl, "POST", `/namespaces/${missing}/iam/roles`, admin.headers, body), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${missing}/iam/roles`, admin.headers), 404, "NOT_FOUND")

        // A Namespace administrator manages Roles but cannot list them (SPEC 4.7: listing needs
        // administer on the Installation).
        const nsAdmin = yield* seedHuman("roles-nsadmin@example.com")
        yield* bindRole(nsAdmin.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
        const created = expectData(yield* send(baseUrl, "POST", path, nsAdmin.headers, body), 201)
        expectData(yield* send(baseUrl, "GET", `${path}/${created.id}`, nsAdmin.headers), 200)
        expectError(yield* send(baseUrl, "GET", path, nsAdmin.headers), 403, "FORBIDDEN")
        // A namespace-viewer sees the Namespace but may not create Roles in it.
        const viewer = yield* seedHuman("roles-viewer@example.com")
        yield* bindRole(viewer.principalId, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        expectError(yield* send(baseUrl, "POST", path, viewer.headers, body), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", `${path}/${created.id}`, viewer.headers), 404, "NOT_FOUND")
        // Denials are audited.
        const denials = yield* auditKinds(ns)
        expect(denials.some((row) => row.kind === "authorization.denied" && row.actor_principal_id === viewer.principalId)).toBe(true)
      }))
  })
})

