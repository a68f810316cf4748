/**
 * Rollback (DESIGN §18, an extension): `POST .../revisions/{revisionId}/redeploy` makes a NEW
 * revision from an earlier revision's frozen snapshot, through deploy's admission, and queues it.
 * No worker runs here: the revisions stay queued, and what was frozen and queued is read back.
 * The real-gateway proof is agents-rollback-e2e.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RevisionId, RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, expectData, expectError, type Headers, seedAdmin, seedHuman, seedNamespace, send } from "./support/iamServer.js"

describe("rollback", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    const setup = (label: string) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin(`rollback-${label}@example.com`)
        const ns = yield* seedNamespace(`rollback-${label}`)
        const call = (method: string, path: string, body?: unknown, headers: Headers = admin.headers) =>
          send(baseUrl, method, `/namespaces/${ns}/${path}`, headers, body)
        const { secret, configuration, agent, role, principalBinding } = yield* setUpDeployableAgent(ns, call, { agents: { label: "A" } })
        const agentPath = `agents/${agent.id}`
        const redeploy = (revisionId: string, headers: Headers = admin.headers) =>
          call("POST", `${agentPath}/revisions/${revisionId}/redeploy`, undefined, headers)
        const revisionCount = Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM agent_revisions WHERE agent_id = ${agent.id}`,
          (rows) => rows[0]!.n
        )
        /** A human holding exactly `permissions` on the Namespace. */
        const humanWith = (email: string, permissions: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const human = yield* seedHuman(email)
            const id = RoleId.make()
            yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${id}, ${ns}, ${`r-${id}`}, ${["namespace:read", ...permissions]})`
            yield* bindRole(human.principalId, id, { kind: "namespace", id: ns })
            return human.headers
          })
        return { sql, ns, call, secret, configuration, agent, agentPath, redeploy, revisionCount, humanWith, principalBinding, role }
      })

    it.effect("a new revision from the old snapshot, queued like a deploy, naming its source", () =>
      Effect.gen(function* () {
        const { sql, ns, call, configuration, agent, agentPath, redeploy } = yield* setup("happy")
        const a = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expectData(yield* call("PATCH", `configurations/${configuration.id}`, { values: { agents: { label: "B" } } }), 200)
        const b = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expect(b.configuration).toEqual({ agents: { label: "B" } })
        expect(b.configurationGeneration).toBe(2)
        expect(b.rolledBackFrom).toBeUndefined()

        const c = expectData(yield* redeploy(a.id), 202)
        const { id: _a, createdAt: _at, ...frozen } = a
        expect(c).toEqual({ ...frozen, id: expect.stringMatching(/^rev_/), rolledBackFrom: a.id, createdAt: expect.any(String) })
        expect(c.id).not.toBe(a.id)
        expect(c.configuration).toEqual({ agents: { label: "A" } })
        expect(c.configurationGeneration).toBe(1)
        expect(expectData(yield* call("GET", `${agentPath}/revisions/${c.id}`), 200)).toEqual(c)
        expect(expectData(yield* call("GET", `${agentPath}/deployments/${c.id}`), 200)).toMatchObject({ deploymentId: c.id, status: "queued" })
        const items = yield* sql<{ key: string; payload: unknown }>`SELECT key, payload FROM work_items WHERE kind = 'agent.deploy' AND key = ${c.id}`
        expect(items).toEqual([{ key: c.id, payload: { namespaceId: ns, agentId: agent.id, revisionId: c.id } }])
        const audits = yield* sql<{ details: unknown }>`SELECT details FROM audit_events WHERE kind = 'agent.rolled-back'`
        expect(audits).toEqual([{ details: { revisionId: c.id, configurationId: configuration.id, configurationGeneration: 1, rolledBackFrom: a.id } }])
        // The saved draft is untouched: the next deploy freezes the Configuration's current values.
        const d = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expect(d.configuration).toEqual({ agents: { label: "B" } })
        expect(d.rolledBackFrom).toBeUndefined()
      }))

    it.effect("the active revision may be redeployed: still a new revision", () =>
      Effect.gen(function* () {
        const { sql, agent, agentPath, call, redeploy } = yield* setup("active")
        const a = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        yield* sql`UPDATE agents SET active_revision_id = ${a.id} WHERE id = ${agent.id}`
        const again = expectData(yield* redeploy(a.id), 202)
        expect(again.id).not.toBe(a.id)
        expect(again.rolledBackFrom).toBe(a.id)
      }))

    it.effect("unknown revision and another Agent's revision: 404, nothing created", () =>
      Effect.gen(function* () {
        const { call, configuration, secret, ns, agentPath, redeploy, revisionCount, role } = yield* setup("missing")
        const other = expectData(yield* call("POST", "agents", {
          name: "other",
          configurationId: configuration.id,
          harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secret.id } }
        }), 201)
        yield* bindRole(other.servicePrincipalId, role, { kind: "secret", id: secret.id, namespaceId: ns })
        const mine = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const theirs = expectData(yield* call("POST", `agents/${other.id}/deploy`), 202)
        const before = yield* revisionCount
        expectError(yield* redeploy(RevisionId.make()), 404, "NOT_FOUND")
        expectError(yield* redeploy(theirs.id), 404, "NOT_FOUND")
        expectError(yield* call("POST", `agents/${other.id}/revisions/${mine.id}/redeploy`), 404, "NOT_FOUND")
        expect(yield* revisionCount).toBe(before)
      }))

    it.effect("authorization: deploy (403) and agent_revision:read (404, hidden) both needed; Secret operate for caller and Agent principal", () =>
      Effect.gen(function* () {
        const { sql, ns, secret, agent, role, agentPath, call, redeploy, revisionCount, humanWith, principalBinding } = yield* setup("authz")
        const a = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const before = yield* revisionCount
        const rest = ["agent:read", "configuration:read", "secret:operate"]
        const noDeploy = yield* humanWith("rollback-nodeploy@example.com", [...rest, "agent_revision:read"])
        expectError(yield* redeploy(a.id, noDeploy), 403, "FORBIDDEN")
        const noRevisionRead = yield* humanWith("rollback-noread@example.com", [...rest, "agent:deploy"])
        // Without read on the revision it is hidden, as from the revision read: 404 (DESIGN §6).
        expectError(yield* redeploy(a.id, noRevisionRead), 404, "NOT_FOUND")
        const noSecret = yield* humanWith("rollback-nosecret@example.com", ["agent:read", "configuration:read", "secret:read", "agent:deploy", "agent_revision:read"])
        expectError(yield* redeploy(a.id, noSecret), 403, "FORBIDDEN")
        const noConfiguration = yield* humanWith("rollback-noconfig@example.com", ["agent:read", "secret:operate", "agent:deploy", "agent_revision:read"])
        expectError(yield* redeploy(a.id, noConfiguration), 404, "NOT_FOUND")
        expectError(yield* send((yield* TestServer).baseUrl, "POST", `/namespaces/${ns}/${agentPath}/revisions/${a.id}/redeploy`, {}), 401, "UNAUTHENTICATED")
        // The Agent principal lost its Secret grant: 403 naming it.
        yield* sql`DELETE FROM access_bindings WHERE id = ${principalBinding}`
        const denied = yield* redeploy(a.id)
        expectError(denied, 403, "FORBIDDEN")
        expect(denied.body.error.message).toContain("service principal")
        expect(yield* revisionCount).toBe(before)
        // With the grant back, a caller holding exactly the permissions named above succeeds.
        yield* bindRole(agent.servicePrincipalId, role, { kind: "secret", id: secret.id, namespaceId: ns })
        const allowed = yield* humanWith("rollback-ok@example.com", [...rest, "agent:deploy", "agent_revision:read"])
        expect(expectData(yield* redeploy(a.id, allowed), 202).rolledBackFrom).toBe(a.id)
      }))

    it.effect("admission: Agent deleting 409 AGENT_DELETING, Namespace not ready 409, nothing created", () =>
      Effect.gen(function* () {
        const { sql, ns, agent, agentPath, call, redeploy, revisionCount } = yield* setup("admission")
        const a = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const before = yield* revisionCount
        yield* sql`UPDATE namespaces SET status = 'provisioning' WHERE id = ${ns}`
        expectError(yield* redeploy(a.id), 409, "NAMESPACE_NOT_READY")
        yield* sql`UPDATE namespaces SET status = 'ready' WHERE id = ${ns}`
        yield* sql`UPDATE agents SET status = 'deleting' WHERE id = ${agent.id}`
        expectError(yield* redeploy(a.id), 409, "AGENT_DELETING")
        expect(yield* revisionCount).toBe(before)
        const queued = yield* sql<{ key: string }>`
          SELECT w.key FROM work_items w JOIN agent_revisions r ON r.id = w.key WHERE w.kind = 'agent.deploy' AND r.agent_id = ${agent.id}
        `
        expect(queued).toEqual([{ key: a.id }])
      }))
  })
})
