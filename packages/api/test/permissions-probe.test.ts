/**
 * The permission probes (extension for the console, docs/decisions/console.md): the caller's
 * permissions on one exact resource, after the same read check as reading it; nothing written.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles, installationAdminPermissions } from "@svc/core/iam"
import { AgentId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createAgentRow } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedHuman, seedNamespace, seedServiceKey, send } from "./support/iamServer.js"

const AGENT_ACTIONS = ["agent:administer", "agent:delete", "agent:deploy", "agent:operate", "agent:read", "agent:update"]
// On a Namespace: every Namespace-level permission, held on everything of its type in it.
const NAMESPACE_ADMIN = [
  "agent:administer", "agent:create", "agent:delete", "agent:deploy", "agent:operate", "agent:read", "agent:update",
  "agent_revision:read", "configuration:create", "configuration:delete", "configuration:read", "configuration:update",
  "credential_source:create", "credential_source:delete", "credential_source:operate", "credential_source:read",
  "credential_source:update", "iam_access_binding:create", "iam_access_binding:delete", "iam_access_binding:read",
  "iam_role:create", "iam_role:delete", "iam_role:read", "namespace:delete", "namespace:read", "preset:create",
  "preset:delete", "preset:read", "preset:update", "provisioning:operate", "provisioning:read", "secret:create",
  "secret:delete", "secret:operate", "secret:read", "secret:update", "service_account:create", "service_account:delete",
  "service_account:read", "service_account:update"
]
const NAMESPACE_VIEWER = [
  "agent:read", "agent_revision:read", "configuration:read", "credential_source:read", "namespace:read", "preset:read",
  "provisioning:read", "secret:read", "service_account:read"
]

const NAMESPACE_EDITOR = [
  "agent:create", "agent:deploy", "agent:operate", "agent:read", "agent:update", "agent_revision:read",
  "configuration:create", "configuration:read", "configuration:update", "credential_source:create",
  "credential_source:operate", "credential_source:read", "credential_source:update", "namespace:read",
  "preset:create", "preset:read", "preset:update", "provisioning:operate", "provisioning:read", "secret:create",
  "secret:operate", "secret:read", "secret:update", "service_account:create", "service_account:read",
  "service_account:update"
]

describe("permission probes", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("an administrator holds everything on each kind of resource", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("probe-admin@example.com")
        const ns = yield* seedNamespace("probe-a")
        const agent = yield* createAgentRow(ns)
        const get = (p: string) => send(baseUrl, "GET", p, admin.headers)
        expect(expectData(yield* get("/permissions"), 200)).toEqual({ permissions: ["installation:administer", "installation:read", "namespace:create"] })
        expect(expectData(yield* get(`/namespaces/${ns}/permissions`), 200)).toEqual({ permissions: NAMESPACE_ADMIN })
        expect(expectData(yield* get(`/namespaces/${ns}/agents/${agent.id}/permissions`), 200)).toEqual({ permissions: AGENT_ACTIONS })
        // The lists are drawn from the catalogue: nothing outside it is ever named.
        expect([...NAMESPACE_ADMIN, ...AGENT_ACTIONS].every((p) => (installationAdminPermissions as ReadonlyArray<string>).includes(p))).toBe(true)
      }))

    it.effect("a Namespace viewer reads only; an editor may not delete; a bare caller learns nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("probe-b")
        const agent = yield* createAgentRow(ns)
        const viewer = yield* seedHuman("probe-viewer@example.com")
        yield* bindRole(viewer.principalId, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        const editor = yield* seedServiceKey("probe-editor", ns)
        yield* bindRole(editor.principalId, BuiltinRoles.namespaceEditor.id, { kind: "namespace", id: ns })
        const bare = yield* seedHuman("probe-bare@example.com")

        const as = (headers: Record<string, string>) => (p: string) => send(baseUrl, "GET", p, headers)
        expect(expectData(yield* as(viewer.headers)("/permissions"), 200)).toEqual({ permissions: [] })
        expect(expectData(yield* as(viewer.headers)(`/namespaces/${ns}/permissions`), 200)).toEqual({ permissions: NAMESPACE_VIEWER })
        expect(expectData(yield* as(viewer.headers)(`/namespaces/${ns}/agents/${agent.id}/permissions`), 200)).toEqual({ permissions: ["agent:read"] })

        // A Namespace key: out of scope on the Installation (nothing held), its Namespace's writes but no deletes.
        expect(expectData(yield* as(editor.headers)("/permissions"), 200)).toEqual({ permissions: [] })
        expect(expectData(yield* as(editor.headers)(`/namespaces/${ns}/permissions`), 200)).toEqual({ permissions: NAMESPACE_EDITOR })
        expect(expectData(yield* as(editor.headers)(`/namespaces/${ns}/agents/${agent.id}/permissions`), 200))
          .toEqual({ permissions: ["agent:deploy", "agent:operate", "agent:read", "agent:update"] })

        // Without read, the probe is the read's answer: 404, never a hint.
        expect(expectData(yield* as(bare.headers)("/permissions"), 200)).toEqual({ permissions: [] })
        expectError(yield* as(bare.headers)(`/namespaces/${ns}/permissions`), 404, "NOT_FOUND")
        expectError(yield* as(bare.headers)(`/namespaces/${ns}/agents/${agent.id}/permissions`), 404, "NOT_FOUND")
      }))

    it.effect("unknown resources are 404; malformed IDs 400; anonymous 401; no audit row is written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("probe-admin-2@example.com")
        const ns = yield* seedNamespace("probe-c")
        const bare = yield* seedHuman("probe-bare-2@example.com")
        const [before] = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM audit_events`
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/agents/${AgentId.make()}/permissions`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", "/namespaces/ns_00000000-0000-4000-8000-000000000000/permissions", admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", "/namespaces/nope/permissions", admin.headers), 400, "INVALID_REQUEST")
        expectError(yield* send(baseUrl, "GET", "/permissions", {}), 401, "UNAUTHENTICATED")
        expect(expectData(yield* send(baseUrl, "GET", "/permissions", bare.headers), 200)).toEqual({ permissions: [] })
        const [after] = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM audit_events`
        expect(after!.count).toBe(before!.count)
      }))
  })
})
