/**
 * Concurrent state changes on one Agent (SPEC 3 Agent and Deployment tables, 4.4, 7.3). Each
 * race is checked against the order the requests committed in, read from the audit trail: a
 * deploy or PATCH admitted before the deletion is 2xx, one after it 409 `AGENT_DELETING`; the
 * last of deploy and stop decides the desired state. No worker runs: admission and stored state
 * are what is raced, without a gateway.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, expectData, expectError, type Result, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { burst, noServerErrors, race, ROUNDS } from "./support/races.js"

/** The Agent's audit kinds (with the revision a deployment admitted), in commit order. */
const agentAudits = (agentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ kind: string; revision_id: string | null }>`
      SELECT kind, details->>'revisionId' AS revision_id FROM audit_events
      WHERE resource_id = ${agentId} AND outcome = 'success' ORDER BY id
    `)

const deployableAgent = (label: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`${label}@example.com`)
    const ns = yield* seedNamespace(label)
    const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
    const fresh = (round: number) =>
      Effect.gen(function* () {
        const setUp = yield* setUpDeployableAgent(ns, (method, path, body) =>
          call(method, path, path === "agents" || path === "secrets" ? { ...(body as object), name: `bot-${round}` } : body))
        return setUp
      })
    return { call, fresh, ns }
  })

/** After the race, the deletion is recorded once and every later mutation is refused. */
const expectDeletedAfter = (call: (method: string, path: string, body?: unknown) => Effect.Effect<Result>, agentId: string, configurationId: string) =>
  Effect.gen(function* () {
    const agent = expectData(yield* call("GET", `agents/${agentId}`), 200)
    expect({ status: agent.status, desired: agent.desiredRuntimeState }).toEqual({ status: "deleting", desired: "stopped" })
    expectError(yield* call("POST", `agents/${agentId}/deploy`), 409, "AGENT_DELETING")
    expectError(yield* call("PATCH", `agents/${agentId}`, { configurationId }), 409, "AGENT_DELETING")
  })

describe("concurrent changes to one Agent", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("parallel deploys each admit their own revision and queue its work; none is lost", () =>
      Effect.gen(function* () {
        const { call, fresh } = yield* deployableAgent("race-deploys")
        const sql = yield* SqlClient.SqlClient
        for (let round = 0; round < ROUNDS; round++) {
          const { agent } = yield* fresh(round)
          const results = yield* burst(5, () => call("POST", `agents/${agent.id}/deploy`))
          noServerErrors(results)
          const ids = results.map((r) => expectData(r, 202).id as string).sort()
          expect(new Set(ids).size).toBe(5)
          expect((yield* sql<{ id: string }>`SELECT id FROM agent_revisions WHERE agent_id = ${agent.id} ORDER BY id`).map((r) => r.id)).toEqual(ids)
          expect((yield* sql<{ key: string }>`SELECT key FROM work_items WHERE kind = 'agent.deploy' AND key IN ${sql.in(ids)} ORDER BY key`).map((r) => r.key))
            .toEqual(ids)
          expect((yield* agentAudits(agent.id)).filter((a) => a.kind === "agent.deployed").map((a) => a.revision_id).sort()).toEqual(ids)
          expect(expectData(yield* call("GET", `agents/${agent.id}`), 200).desiredRuntimeState).toBe("running")
        }
      }))

    it.effect("parallel Configuration PATCHes: every one applies once, generations are distinct and none is lost", () =>
      Effect.gen(function* () {
        const { call } = yield* deployableAgent("race-cfg-patch")
        const sql = yield* SqlClient.SqlClient
        for (let round = 0; round < ROUNDS; round++) {
          const cfg = expectData(yield* call("POST", "configurations", { kind: "agent", values: {} }), 201).id as string
          const results = yield* race(Array.from({ length: 6 }, (_, i) => call("PATCH", `configurations/${cfg}`, { values: { n: i } })))
          noServerErrors(results)
          const generations = results.map((r) => expectData(r, 200).generation as number).sort((a, b) => a - b)
          expect(generations).toEqual([2, 3, 4, 5, 6, 7])
          const last = results.find((r) => r.body.data.generation === 7)!.body.data.values
          expect(expectData(yield* call("GET", `configurations/${cfg}`), 200)).toMatchObject({ generation: 7, values: last })
          const audited = yield* sql<{ generation: number }>`
            SELECT (details->>'generation')::int AS generation FROM audit_events
            WHERE kind = 'configuration.updated' AND resource_id = ${cfg} ORDER BY id
          `
          expect(audited.map((a) => a.generation)).toEqual([2, 3, 4, 5, 6, 7])
        }
      }))

    it.effect("deploy racing stop: both admitted, and the one committed last decides the desired state", () =>
      Effect.gen(function* () {
        const { call, fresh } = yield* deployableAgent("race-deploy-stop")
        for (let round = 0; round < ROUNDS; round++) {
          const { agent } = yield* fresh(round)
          const results = yield* race([call("POST", `agents/${agent.id}/deploy`), call("POST", `agents/${agent.id}/stop`), call("POST", `agents/${agent.id}/deploy`)])
          noServerErrors(results)
          expect(results.map((r) => r.status)).toEqual([202, 202, 202])
          const order = (yield* agentAudits(agent.id)).map((a) => a.kind).filter((k) => k === "agent.deployed" || k === "agent.stopped")
          expect(order.sort()).toEqual(["agent.deployed", "agent.deployed", "agent.stopped"])
          const last = (yield* agentAudits(agent.id)).map((a) => a.kind).filter((k) => k === "agent.deployed" || k === "agent.stopped").at(-1)
          expect(expectData(yield* call("GET", `agents/${agent.id}`), 200).desiredRuntimeState).toBe(last === "agent.stopped" ? "stopped" : "running")
        }
      }))

    it.effect("deploy and PATCH racing DELETE: admitted only when committed before the deletion, 409 AGENT_DELETING after it", () =>
      Effect.gen(function* () {
        const { call, fresh } = yield* deployableAgent("race-deploy-delete")
        const sql = yield* SqlClient.SqlClient
        for (let round = 0; round < ROUNDS; round++) {
          const { agent, configuration } = yield* fresh(round)
          const [deployed, patched, deleted, again] = yield* race([
            call("POST", `agents/${agent.id}/deploy`),
            call("PATCH", `agents/${agent.id}`, { configurationId: configuration.id, pluginApprovers: [] }),
            call("DELETE", `agents/${agent.id}`),
            call("DELETE", `agents/${agent.id}`)
          ])
          noServerErrors([deployed!, patched!, deleted!, again!])
          expect([deleted!.status, again!.status]).toEqual([202, 202])
          const kinds = (yield* agentAudits(agent.id)).map((a) => a.kind)
          // One deletion, then one retry; a mutation is recorded only if it came before the first.
          expect(kinds.filter((k) => k.startsWith("agent.deleted") || k === "agent.deletion-retried")).toEqual(["agent.deleted", "agent.deletion-retried"])
          const deletedAt = kinds.indexOf("agent.deleted")
          for (const [result, kind, status] of [[deployed!, "agent.deployed", 202], [patched!, "agent.updated", 200]] as const) {
            const at = kinds.indexOf(kind)
            if (result.status === status) expect(at).toBeGreaterThanOrEqual(0)
            if (result.status === status) expect(at).toBeLessThan(deletedAt)
            else {
              expectError(result, 409, "AGENT_DELETING")
              expect(at).toBe(-1)
            }
          }
          const revisions = yield* sql`SELECT id FROM agent_revisions WHERE agent_id = ${agent.id}`
          expect(revisions.length).toBe(deployed!.status === 202 ? 1 : 0)
          expect(yield* sql`SELECT state FROM work_items WHERE kind = 'agent.teardown' AND key = ${agent.id}`).toHaveLength(1)
          yield* expectDeletedAfter(call, agent.id, configuration.id)
        }
      }))
  })
})
