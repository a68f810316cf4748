/**
 * Concurrent creates with one name (SPEC 2.4, 2.16, 4.2-4.7, 7.3-7.4): real clients retry and
 * race, and a name is unique in its scope. Of N simultaneous creates exactly one is 201, every
 * other one is 409 RESOURCE_CONFLICT with the envelope (never a 5xx from a leaked unique
 * violation), one row exists and one success audit names it.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RequestId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, type Headers, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { burst, noServerErrors, oneWinner, ROUNDS, successAudits } from "./support/races.js"

const N = 6

interface Target {
  readonly label: string
  readonly path: (ns: string) => string
  readonly body: (name: string, ns: string) => unknown
  readonly rows: (ns: string, name: string) => Effect.Effect<ReadonlyArray<{ id: string }>, unknown, SqlClient.SqlClient>
  readonly audit: string
}

const rowsOf = (table: string) => (ns: string, name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`SELECT id FROM ${sql(table)} WHERE namespace_id = ${ns} AND name = ${name}`)

const targets: ReadonlyArray<Target> = [
  { label: "Secret", path: (ns) => `/namespaces/${ns}/secrets`, body: (name) => ({ name, value: "v-1" }), rows: rowsOf("secrets"), audit: "secret.created" },
  { label: "Preset", path: (ns) => `/namespaces/${ns}/presets`, body: (name) => ({ name, template: {} }), rows: rowsOf("presets"), audit: "preset.created" },
  {
    label: "Role",
    path: (ns) => `/namespaces/${ns}/iam/roles`,
    body: (name) => ({ name, permissions: ["agent:read"] }),
    rows: rowsOf("roles"),
    audit: "iam.role.created"
  }
]

const raceCreates = (baseUrl: string, headers: Headers, ns: string, target: Target, round: number, extra?: (name: string) => unknown) =>
  Effect.gen(function* () {
    const name = `${target.label.replace(/ /g, "-").toLowerCase()}-${round}`
    const before = (yield* successAudits(target.audit)).length
    const results = yield* burst(N, () => send(baseUrl, "POST", target.path(ns), headers, extra === undefined ? target.body(name, ns) : extra(name)))
    noServerErrors(results)
    const winner = expectData(oneWinner(results, 201, 409, "RESOURCE_CONFLICT"), 201)
    expect(yield* target.rows(ns, name)).toEqual([{ id: winner.id }])
    expect((yield* successAudits(target.audit)).slice(before)).toEqual([winner.id])
  })

describe("concurrent creates with one name", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("Namespaces: one 201, the rest 409, one row, one audit", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("race-ns@example.com")
        const sql = yield* SqlClient.SqlClient
        for (let round = 0; round < ROUNDS; round++) {
          const name = `race-ns-${round}`
          const before = (yield* successAudits("namespace.created")).length
          const results = yield* burst(N, () => send(baseUrl, "POST", "/namespaces", admin.headers, { name }))
          noServerErrors(results)
          const winner = expectData(oneWinner(results, 201, 409, "RESOURCE_CONFLICT"), 201)
          expect(yield* sql`SELECT id FROM namespaces WHERE name = ${name}`).toEqual([{ id: winner.id }])
          expect((yield* successAudits("namespace.created")).slice(before)).toEqual([winner.id])
        }
      }))

    for (const target of targets) {
      it.effect(`${target.label}s: one 201, the rest 409, one row, one audit`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TestServer
          const admin = yield* seedAdmin(`race-${target.audit}@example.com`)
          const ns = yield* seedNamespace(`race-${target.audit}`)
          for (let round = 0; round < ROUNDS; round++) yield* raceCreates(baseUrl, admin.headers, ns, target, round)
        }))
    }

    // docs/decisions/service-accounts.md: account names are not unique (the upstream name carries
    // the id), so racing creates are all admitted, each once.
    it.effect("service accounts with one name: every create is 201 with its own row and audit", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("race-accounts@example.com")
        const ns = yield* seedNamespace("race-accounts")
        const sql = yield* SqlClient.SqlClient
        for (let round = 0; round < ROUNDS; round++) {
          const name = `account-${round}`
          const before = (yield* successAudits("service_account.created")).length
          const results = yield* burst(N, () => send(baseUrl, "POST", `/namespaces/${ns}/service-accounts`, admin.headers, { name }))
          noServerErrors(results)
          const ids = results.map((r) => expectData(r, 201).id as string).sort()
          expect(new Set(ids).size).toBe(N)
          expect((yield* sql<{ id: string }>`SELECT id FROM service_accounts WHERE namespace_id = ${ns} AND name = ${name} ORDER BY id`).map((r) => r.id)).toEqual(ids)
          expect((yield* successAudits("service_account.created")).slice(before).sort()).toEqual(ids)
        }
      }))

    it.effect("Agents: one 201, the rest 409, one row, one audit", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("race-agents@example.com")
        const ns = yield* seedNamespace("race-agents")
        const configuration = expectData(
          yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: { agents: {} } }),
          201
        )
        const target: Target = {
          label: "Agent",
          path: (namespace) => `/namespaces/${namespace}/agents`,
          body: (name) => ({ name, configurationId: configuration.id }),
          rows: rowsOf("agents"),
          audit: "agent.created"
        }
        for (let round = 0; round < ROUNDS; round++) yield* raceCreates(baseUrl, admin.headers, ns, target, round)
      }))

    it.effect("Agent provisioning with one requestId: every request answers the same work item, one record, one audit", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("race-provision@example.com")
        const ns = yield* seedNamespace("race-provision")
        const sql = yield* SqlClient.SqlClient
        for (let round = 0; round < ROUNDS; round++) {
          const body = { requestId: RequestId.make(), name: `provisioned-${round}`, configuration: { kind: "agent", values: { agents: {} } } }
          const before = (yield* successAudits("agent.provisioning-admitted")).length
          const results = yield* burst(N, () => send(baseUrl, "POST", `/namespaces/${ns}/agents/provision`, admin.headers, body))
          noServerErrors(results)
          expect(results.map((r) => r.status)).toEqual(Array<number>(N).fill(202))
          const workIds = new Set(results.map((r) => r.body.data.provisioning.workId))
          expect(workIds.size).toBe(1)
          const [workId] = [...workIds]
          expect(yield* sql`SELECT id FROM agent_provisioning WHERE namespace_id = ${ns} AND request_id = ${body.requestId}`).toEqual([{ id: workId }])
          expect((yield* successAudits("agent.provisioning-admitted")).slice(before)).toEqual([workId])
        }
      }))
  })
})
