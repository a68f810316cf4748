import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ServiceAccountId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createAccount as createHuman, signedInSession } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { expectData, expectError, type Headers, seedAdmin, send, withSession } from "./support/iamServer.js"
import { accountsPath, binding, createAccount, dedicated, issue, managedApiLayer, roleWith, Vendor, world } from "./support/serviceAccountWorld.js"

describe("provider_service_account and direct_token admission with dedicated execution (SPEC 2.5, 7.3)", () => {
  it.layer(managedApiLayer("kubernetes"), { timeout: 120_000 })((it) => {
    it.effect("the account must be this Namespace's, credentialed, and on the Agent's Backend", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("psa-rules@example.com")
        const w = yield* world(baseUrl, admin.headers, "psa-rules")
        const other = yield* world(baseUrl, admin.headers, "psa-rules-other")
        const sql = yield* SqlClient.SqlClient
        const count = sql<{ n: number }>`SELECT count(*)::int AS n FROM agents WHERE namespace_id = ${w.ns}`

        expectError(yield* w.agents(admin.headers, dedicated(ServiceAccountId.make())), 404, "NOT_FOUND")
        expectError(yield* w.agents(admin.headers, dedicated(other.ready)), 404, "NOT_FOUND")
        expectError(yield* w.agents(admin.headers, dedicated(w.bare)), 409, "RESOURCE_CONFLICT")
        expectError(yield* w.agents(admin.headers, { ...dedicated(w.ready), backendId: null }), 409, "RESOURCE_CONFLICT")
        expectError(yield* w.agents(admin.headers, { ...dedicated(w.ready), executionMode: "embedded" }), 409, "RESOURCE_CONFLICT")
        expect((yield* count)[0]!.n).toBe(0)

        const agent = expectData(yield* w.agents(admin.headers, dedicated(w.ready)), 201)
        expect(agent.harnessAuth).toEqual(binding(w.ready))
        // A Backend change under the kept binding must still match the account.
        const patch = (headers: Headers, body: Record<string, unknown>) =>
          send(baseUrl, "PATCH", `/namespaces/${w.ns}/agents/${agent.id}`, headers, { configurationId: w.configurationId, ...body })
        expectError(yield* patch(admin.headers, { backendId: null }), 409, "RESOURCE_CONFLICT")
        // A kept binding is not re-admitted by an unrelated update, even once its token expired...
        yield* sql`UPDATE service_accounts SET credential_expires_at = now() - interval '1 minute' WHERE id = ${w.ready}`
        expect(expectData(yield* patch(admin.headers, {}), 200).harnessAuth).toEqual(binding(w.ready))
        // ...but binding an expired credential is refused.
        expectError(yield* w.agents(admin.headers, { ...dedicated(w.ready), name: "late" }), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE service_accounts SET credential_expires_at = now() + interval '1 hour' WHERE id = ${w.ready}`

        // direct_token: a Secret the caller may operate; no managed account is created.
        const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${w.ns}/secrets`, admin.headers, { name: "token", value: "direct-token-value" }), 201)
        const direct = { method: "direct_token", source: { kind: "secret", namespaceId: w.ns, id: secret.id } }
        expectError(yield* w.agents(admin.headers, { name: "direct", executionMode: "dedicated", harnessAuth: { ...direct, source: { ...direct.source, id: other.ready.replace("sa_", "sec_") } } }), 404, "NOT_FOUND")
        const directAgent = expectData(yield* w.agents(admin.headers, { name: "direct", executionMode: "dedicated", harnessAuth: direct }), 201)
        expect(directAgent.harnessAuth).toEqual(direct)
        expect(JSON.stringify(directAgent)).not.toContain("direct-token-value")
        const [accounts] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM service_accounts WHERE namespace_id = ${w.ns}`
        expect(accounts!.n).toBe(2)
        // SPEC 2.5: a kept binding that needs dedicated execution refuses a PATCH to embedded (as
        // a Backend change under a kept account binding is checked again), and nothing changes.
        for (const kept of [agent, directAgent]) {
          const path = `/namespaces/${w.ns}/agents/${kept.id}`
          expectError(yield* send(baseUrl, "PATCH", path, admin.headers, { configurationId: w.configurationId, executionMode: "embedded" }), 409, "RESOURCE_CONFLICT")
          expect(expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)).toMatchObject({ executionMode: "dedicated", harnessAuth: kept.harnessAuth })
        }
      }))

    it.effect("the caller needs exact read on the new account, and on the current one when replacing or clearing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("psa-authz@example.com")
        const w = yield* world(baseUrl, admin.headers, "psa-authz")
        const second = expectData(yield* createAccount(baseUrl, admin.headers, w.ns, "second"), 201)
        expectData(yield* issue(baseUrl, admin.headers, w.ns, second.id), 201)

        const human = yield* createHuman("psa-editor@example.com")
        const editor = withSession((yield* signedInSession(human.userId)).token)
        yield* bindRole(human.principalId, yield* roleWith(w.ns, "namespace:read", "agent:create", "agent:read", "agent:update", "configuration:read"), { kind: "namespace", id: w.ns })
        // Without read on the account it is hidden.
        expectError(yield* w.agents(editor, dedicated(w.ready)), 404, "NOT_FOUND")
        yield* bindRole(human.principalId, yield* roleWith(w.ns, "service_account:read"), { kind: "service_account", id: second.id, namespaceId: w.ns })
        const agent = expectData(yield* w.agents(editor, dedicated(second.id)), 201)

        // The admin binds `ready`; the editor (no read on it) can neither replace nor clear it.
        const patch = (headers: Headers, body: Record<string, unknown>) =>
          send(baseUrl, "PATCH", `/namespaces/${w.ns}/agents/${agent.id}`, headers, { configurationId: w.configurationId, ...body })
        expectData(yield* patch(admin.headers, { harnessAuth: binding(w.ready) }), 200)
        expectError(yield* patch(editor, { harnessAuth: binding(second.id) }), 404, "NOT_FOUND")
        expectError(yield* patch(editor, { harnessAuth: null }), 404, "NOT_FOUND")
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${w.ns}/agents/${agent.id}`, admin.headers), 200).harnessAuth).toEqual(binding(w.ready))
        // With read on both, replacing works; clearing needs read on the current one only.
        yield* bindRole(human.principalId, yield* roleWith(w.ns, "service_account:read"), { kind: "service_account", id: w.ready, namespaceId: w.ns })
        expect(expectData(yield* patch(editor, { harnessAuth: binding(second.id) }), 200).harnessAuth).toEqual(binding(second.id))
        expect(expectData(yield* patch(editor, { harnessAuth: null }), 200)).not.toHaveProperty("harnessAuth.serviceAccountId")
      }))

    it.effect("deletion is refused while a draft, a queued deployment or an active revision uses the account", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("psa-delete@example.com")
        const w = yield* world(baseUrl, admin.headers, "psa-delete")
        const agent = expectData(yield* w.agents(admin.headers, dedicated(w.ready)), 201)
        const del = () => send(baseUrl, "DELETE", `${accountsPath(w.ns)}/${w.ready}`, admin.headers)
        expectError(yield* del(), 409, "RESOURCE_CONFLICT")

        const deployed = yield* send(baseUrl, "POST", `/namespaces/${w.ns}/agents/${agent.id}/deploy`, admin.headers)
        const revision = expectData(deployed, 202)
        expectData(yield* send(baseUrl, "PATCH", `/namespaces/${w.ns}/agents/${agent.id}`, admin.headers, { configurationId: w.configurationId, harnessAuth: null }), 200)
        // The draft no longer uses it; the queued deployment does.
        expectError(yield* del(), 409, "RESOURCE_CONFLICT")
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE work_items SET state = 'succeeded', finished_at = now() WHERE key = ${revision.id}`
        yield* sql`UPDATE agents SET active_revision_id = ${revision.id} WHERE id = ${agent.id}`
        // Now the active revision does.
        expectError(yield* del(), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE agents SET active_revision_id = NULL WHERE id = ${agent.id}`
        expect((yield* del()).status).toBe(204)
        expect(vendor.accounts().filter((a) => a.name === `ready-${w.ready}`)).toEqual([])
      }))
  })
})
