/**
 * SPEC 4.3: "Changing a Configuration does not queue work or alter active or earlier revisions."
 * An Agent is deployed (no worker runs: its revision stays queued, then is marked active by
 * hand), its Configuration is PATCHed with new values and a new Secret binding, and everything
 * the deployment froze or queued is read back unchanged; only the next deployment sees the change.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { bindRole } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, expectData, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

describe("Configurations and revisions", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a PATCH queues no work and leaves the active and earlier revisions as they were frozen", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("cfg-revisions@example.com")
        const ns = yield* seedNamespace("cfg-revisions")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const { configuration, agent, role } = yield* setUpDeployableAgent(ns, call, { agents: { label: "A" } })
        const agentPath = `agents/${agent.id}`
        const earlier = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const active = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        yield* sql`UPDATE agents SET active_revision_id = ${active.id} WHERE id = ${agent.id}`
        const agentBefore = expectData(yield* call("GET", agentPath), 200)
        expect(agentBefore.activeRevisionId).toBe(active.id)
        const deploymentsBefore = [
          expectData(yield* call("GET", `${agentPath}/deployments/${earlier.id}`), 200),
          expectData(yield* call("GET", `${agentPath}/deployments/${active.id}`), 200)
        ]
        const work = sql<{ kind: string; key: string; state: string; updated_at: Date }>`
          SELECT kind, key, state, updated_at FROM work_items ORDER BY kind, key
        `
        const workBefore = yield* work

        const extra = expectData(yield* call("POST", "secrets", { name: "search-key", value: "s3cr3t" }), 201)
        const patched = expectData(yield* call("PATCH", `configurations/${configuration.id}`, {
          values: { agents: { label: "B" } },
          secretBindings: { SEARCH_KEY: { source: { kind: "secret", namespaceId: ns, id: extra.id } } }
        }), 200)
        expect(patched.generation).toBe(2)

        expect(yield* work).toEqual(workBefore)
        expect(expectData(yield* call("GET", agentPath), 200)).toEqual(agentBefore)
        for (const revision of [earlier, active]) {
          const read = expectData(yield* call("GET", `${agentPath}/revisions/${revision.id}`), 200)
          expect(read).toEqual(revision)
          expect(read.configuration).toEqual({ agents: { label: "A" } })
          expect(read.configurationGeneration).toBe(1)
          expect(read.secretBindings).toEqual({})
        }
        expect(expectData(yield* call("GET", `${agentPath}/deployments/${earlier.id}`), 200)).toEqual(deploymentsBefore[0])
        expect(expectData(yield* call("GET", `${agentPath}/deployments/${active.id}`), 200)).toEqual(deploymentsBefore[1])
        expect((expectData(yield* call("GET", `${agentPath}/revisions`), 200) as Array<{ id: string }>).map((r) => r.id).sort())
          .toEqual([earlier.id, active.id].sort())

        // Only the next deployment freezes the new generation (its principal may use the new Secret).
        yield* bindRole(agent.servicePrincipalId, role, { kind: "secret", id: extra.id, namespaceId: ns })
        const next = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expect(next.configuration).toEqual({ agents: { label: "B" } })
        expect(next.configurationGeneration).toBe(2)
        expect(Object.keys(next.secretBindings)).toEqual(["SEARCH_KEY"])
      }))
  })
})
