/**
 * SPEC 8 limits at their edges, over the real API and database, where no other file reaches
 * them: a detail pointer of SPEC 7.1 (at most 512 characters) under a prefix the server adds,
 * a Configuration's `generation` at 9007199254740991, and diagnostics of a Compute Driver that
 * reports more than 32 checks. Each refusal leaves nothing changed.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ComputeDriver } from "@svc/core/drivers/compute"
import { Limits, RequestId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { unavailableCompute } from "../../../testing/drivers.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayerWith, expectData, expectError, seedAdmin, seedNamespace, send, TIMESTAMP } from "./support/iamServer.js"

/** No Compute host, except diagnostics: 40 failing checks, more than SPEC 2.7's 32. */
const chattyCompute = Layer.effect(
  ComputeDriver,
  Effect.map(ComputeDriver, (driver) => ({
    ...driver,
    diagnostics: () => Effect.succeed(Array.from({ length: 40 }, (_, i) => ({ name: `gateway.check-${i}`, status: "fail" as const, message: "down" })))
  }))
).pipe(Layer.provide(unavailableCompute))

const rows = (ns: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ provisioning: number; agents: number; configurations: number }>`
      SELECT (SELECT count(*)::int FROM agent_provisioning WHERE namespace_id = ${ns}) AS provisioning,
        (SELECT count(*)::int FROM agents WHERE namespace_id = ${ns}) AS agents,
        (SELECT count(*)::int FROM configurations WHERE namespace_id = ${ns}) AS configurations
    `.pipe(Effect.map((found) => found[0]!)))

describe("SPEC 8 limits at their edges", () => {
  it.layer(apiTestLayerWith(chattyCompute), { timeout: 120_000 })((it) => {
    it.effect("a Preset's rendered plugin settings refused at a long pointer: 400 whose path stays within 512, not 500", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("limits-preset@example.com")
        const ns = yield* seedNamespace("limits-preset")
        // A Preset holds plugin settings as objects, checked when rendered. The refused value's
        // pointer, /agent/plugins/<253>/tools/<240>/approval, is longer than 512 characters;
        // without /agent it is cut to /plugins/<253>/tools/<240>, 509 characters.
        const plugin = "p".repeat(Limits.pluginId.max)
        const tool = "t".repeat(240)
        const template = { agent: { plugins: { [plugin]: { enabled: true, tools: { [tool]: { approval: "sometimes" } } } } } }
        const preset = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, admin.headers, { name: "long-tool", template }), 201)
        const before = yield* rows(ns)
        const refused = yield* send(baseUrl, "POST", `/namespaces/${ns}/agents/provision`, admin.headers, {
          requestId: RequestId.make(),
          name: "Long tool",
          presetId: preset.id
        })
        // Cut back to whole segments: the tool's segment would pass 512.
        expectError(refused, 400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: `/agent/plugins/${plugin}/tools` }])
        expect(yield* rows(ns)).toEqual(before)
      }))

    it.effect("a Configuration at generation 9007199254740991 takes no PATCH: 409, unchanged; one below reaches it", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("limits-generation@example.com")
        const ns = yield* seedNamespace("limits-generation")
        const created = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: { v: 0 } }), 201)
        const path = `/namespaces/${ns}/configurations/${created.id}`
        yield* sql`UPDATE configurations SET generation = ${Limits.configurationGeneration - 1} WHERE id = ${created.id}`
        const last = expectData(yield* send(baseUrl, "PATCH", path, admin.headers, { values: { v: 1 } }), 200)
        expect(last).toMatchObject({ generation: Limits.configurationGeneration, values: { v: 1 } })
        expectError(yield* send(baseUrl, "PATCH", path, admin.headers, { values: { v: 2 } }), 409, "RESOURCE_CONFLICT")
        expect(expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)).toEqual(last)
        const audited = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM audit_events WHERE kind = 'configuration.updated' AND resource_id = ${created.id}`
        expect(audited).toEqual([{ n: 1 }])
      }))

    it.effect("diagnostics answer at most 32 checks however many the Compute Driver reports", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("limits-diagnostics@example.com")
        const ns = yield* seedNamespace("limits-diagnostics")
        const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents`, admin.headers, {
          name: "chatty",
          configurationId: configuration.id,
          harnessAuth: { method: "runtime" }
        }), 201)
        const revision = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents/${agent.id}/deploy`, admin.headers), 202)
        yield* sql`UPDATE agents SET active_revision_id = ${revision.id} WHERE id = ${agent.id}`
        const result = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents/${agent.id}/deployments/${revision.id}/diagnostics`, admin.headers), 200)
        expect(result.checks).toEqual(Array.from({ length: Limits.diagnosticsChecks }, (_, i) => ({
          component: "gateway",
          check: `check-${i}`,
          state: "failed",
          checkedAt: expect.stringMatching(TIMESTAMP),
          code: `GATEWAY_CHECK_${i}`
        })))
      }))
  })
})
