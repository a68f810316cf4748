/**
 * Deleting a resource removes the AccessBindings and Restrictions that name it as their exact
 * resource, in the deleting transaction (SPEC 3 says so for an Agent; docs/decisions/iam.md
 * applies it to every bindable resource). A binding that USES a Role is not one on it: it still
 * keeps the Role from being deleted (SPEC 2.16).
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import { bindRole, createServicePrincipal, insertRestriction } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, bindViewerOn, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

/** The bindings and Restrictions naming one exact resource. */
const policyOn = (kind: string, id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ bindings: number; restrictions: number }>`
      SELECT (SELECT count(*)::int FROM access_bindings WHERE resource_kind = ${kind} AND resource_id = ${id}) AS bindings,
        (SELECT count(*)::int FROM restrictions WHERE resource_kind = ${kind} AND resource_id = ${id}) AS restrictions
    `
    return rows[0]!
  })

describe("deleting a resource removes the policy on it", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("Secret, Configuration, Preset, Role, service account and AccessBinding: 204 and their exact-resource bindings are gone", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cleanup-admin@example.com")
        const ns = yield* seedNamespace("cleanup")
        const holder = yield* createServicePrincipal("cleanup-holder", ns)
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const bindingOn = (kind: string, id: string) => bindViewerOn(baseUrl, admin.headers, ns, holder, { kind, id })
        const resources = [
          { kind: "secret", path: "secrets", body: { name: "s", value: "v" } },
          { kind: "configuration", path: "configurations", body: { kind: "agent", values: {} } },
          { kind: "preset", path: "presets", body: { name: "p", template: {} } },
          { kind: "iam_role", path: "iam/roles", body: { name: "custom", permissions: ["secret:read"] } },
          { kind: "service_account", path: "service-accounts", body: { name: "native" } }
        ]
        // A survivor of every kind: bindings on it stay.
        const survivors: Array<{ kind: string; id: string }> = []
        for (const resource of resources) {
          const kept = expectData(yield* call("POST", resource.path, { ...resource.body, ...("name" in resource.body ? { name: `${resource.body.name}-kept` } : {}) }), 201)
          yield* bindingOn(resource.kind, kept.id)
          survivors.push({ kind: resource.kind, id: kept.id })
        }
        for (const resource of resources) {
          const created = expectData(yield* call("POST", resource.path, resource.body), 201)
          const binding = yield* bindingOn(resource.kind, created.id)
          yield* insertRestriction(holder, resource.kind, created.id)
          expect(yield* policyOn(resource.kind, created.id)).toEqual({ bindings: 1, restrictions: 1 })
          expect((yield* call("DELETE", `${resource.path}/${created.id}`)).status).toBe(204)
          expect(yield* policyOn(resource.kind, created.id)).toEqual({ bindings: 0, restrictions: 0 })
          expectError(yield* call("GET", `iam/access-bindings/${binding.id}`), 404, "NOT_FOUND")
        }
        for (const survivor of survivors) expect(yield* policyOn(survivor.kind, survivor.id)).toEqual({ bindings: 1, restrictions: 0 })

        // A binding on a binding goes with it, and so does one on that one.
        const target = yield* bindingOn("namespace", ns)
        const onTarget = yield* bindingOn("iam_access_binding", target.id)
        const onOnTarget = yield* bindingOn("iam_access_binding", onTarget.id)
        yield* insertRestriction(holder, "iam_access_binding", onTarget.id)
        expect((yield* call("DELETE", `iam/access-bindings/${target.id}`)).status).toBe(204)
        expect(yield* policyOn("iam_access_binding", target.id)).toEqual({ bindings: 0, restrictions: 0 })
        expect(yield* policyOn("iam_access_binding", onTarget.id)).toEqual({ bindings: 0, restrictions: 0 })
        expectError(yield* call("GET", `iam/access-bindings/${onTarget.id}`), 404, "NOT_FOUND")
        expectError(yield* call("GET", `iam/access-bindings/${onOnTarget.id}`), 404, "NOT_FOUND")
      }))

    it.effect("deleting a service principal removes its bindings, the bindings on them (transitively) and their Restrictions; others stay", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("cleanup-sp@example.com")
        const ns = yield* seedNamespace("cleanup-sp")
        const holder = yield* createServicePrincipal("cleanup-sp-holder", ns)
        const doomed = yield* createServicePrincipal("cleanup-sp-doomed", ns)
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const bind = (principalId: string, kind: string, id: string) =>
          Effect.map(bindViewerOn(baseUrl, admin.headers, ns, principalId, { kind, id }), (created) => created.id as string)
        const own = yield* bind(doomed, "namespace", ns)
        const onOwn = yield* bind(holder, "iam_access_binding", own)
        const onOnOwn = yield* bind(holder, "iam_access_binding", onOwn)
        yield* insertRestriction(holder, "iam_access_binding", own)
        yield* insertRestriction(holder, "iam_access_binding", onOwn)
        // The holder's own binding, with a binding on it: neither names anything removed.
        const kept = yield* bind(holder, "namespace", ns)
        const onKept = yield* bind(holder, "iam_access_binding", kept)
        yield* insertRestriction(holder, "iam_access_binding", kept)

        expect((yield* call("DELETE", `iam/service-principals/${doomed}`)).status).toBe(204)
        for (const gone of [own, onOwn, onOnOwn]) expectError(yield* call("GET", `iam/access-bindings/${gone}`), 404, "NOT_FOUND")
        expect(yield* policyOn("iam_access_binding", own)).toEqual({ bindings: 0, restrictions: 0 })
        expect(yield* policyOn("iam_access_binding", onOwn)).toEqual({ bindings: 0, restrictions: 0 })
        expect(yield* policyOn("iam_access_binding", kept)).toEqual({ bindings: 1, restrictions: 1 })
        expect(expectData(yield* call("GET", `iam/access-bindings/${onKept}`), 200).id).toBe(onKept)
        expect(yield* sql`
          SELECT details FROM audit_events WHERE kind = 'iam.service-principal.deleted' AND resource_id = ${doomed}
        `).toEqual([{ details: { removedBindings: 3 } }])
      }))

    it.effect("a Role still granted by a binding is 409 to DELETE and nothing is removed; bindings ON it do not block", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cleanup-role@example.com")
        const ns = yield* seedNamespace("cleanup-role")
        const holder = yield* createServicePrincipal("cleanup-role-holder", ns)
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const role = expectData(yield* call("POST", "iam/roles", { name: "used", permissions: ["secret:read"] }), 201)
        const using = yield* bindRole(holder, role.id, { kind: "namespace", id: ns })
        const on = expectData(yield* call("POST", "iam/access-bindings", {
          principalId: holder,
          roleId: BuiltinRoles.namespaceViewer.id,
          resource: { kind: "iam_role", id: role.id }
        }), 201)
        const refused = yield* call("DELETE", `iam/roles/${role.id}`)
        expectError(refused, 409, "RESOURCE_CONFLICT")
        expect(refused.body.error.message).toBe("The Role is referenced by an AccessBinding; remove the bindings first.")
        expect(expectData(yield* call("GET", `iam/roles/${role.id}`), 200)).toEqual(role)
        expect(expectData(yield* call("GET", `iam/access-bindings/${on.id}`), 200)).toEqual(on)
        expect(expectData(yield* call("GET", `iam/access-bindings/${using}`), 200).roleId).toBe(role.id)

        expect((yield* call("DELETE", `iam/access-bindings/${using}`)).status).toBe(204)
        expect((yield* call("DELETE", `iam/roles/${role.id}`)).status).toBe(204)
        expectError(yield* call("GET", `iam/access-bindings/${on.id}`), 404, "NOT_FOUND")
        expect(yield* policyOn("iam_role", role.id)).toEqual({ bindings: 0, restrictions: 0 })
      }))
  })
})
