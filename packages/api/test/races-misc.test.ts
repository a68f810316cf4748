/**
 * Repeated and crossing deletions and renames (SPEC 3, 4.2, 4.7, 5.5): a delete sent N times at
 * once removes the row once (one 204 or 202, the rest 404 or the repeat's 202), a rename races
 * like a create, and a service key is never issued to a principal deleted beside it.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { burst, noServerErrors, oneWinner, race, ROUNDS, successAudits } from "./support/races.js"

const collections = [
  { collection: "secrets", audit: "secret.deleted", body: (round: number) => ({ name: `s-${round}`, value: "v" }) },
  { collection: "presets", audit: "preset.deleted", body: (round: number) => ({ name: `p-${round}`, template: {} }) },
  { collection: "configurations", audit: "configuration.deleted", body: () => ({ kind: "agent", values: {} }) },
  { collection: "iam/roles", audit: "iam.role.deleted", body: (round: number) => ({ name: `r-${round}`, permissions: ["agent:read"] }) }
] as const

describe("repeated deletions, renames and key issuance", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("N DELETEs of one resource: one 204, the rest 404, one audit", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("race-deletes@example.com")
        const ns = yield* seedNamespace("race-deletes")
        for (const { collection, audit, body } of collections) {
          for (let round = 0; round < ROUNDS; round++) {
            const id = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/${collection}`, admin.headers, body(round)), 201).id as string
            const results = yield* burst(5, () => send(baseUrl, "DELETE", `/namespaces/${ns}/${collection}/${id}`, admin.headers))
            noServerErrors(results)
            oneWinner(results, 204, 404, "NOT_FOUND")
            expect((yield* successAudits(audit)).filter((resource) => resource === id)).toEqual([id])
          }
        }
      }))

    it.effect("N DELETE /namespaces: all 202 deleting, one audit, one teardown", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("race-ns-deletes@example.com")
        for (let round = 0; round < ROUNDS; round++) {
          const ns = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: `race-ns-deletes-${round}` }), 201).id as string
          const results = yield* burst(5, () => send(baseUrl, "DELETE", `/namespaces/${ns}`, admin.headers))
          noServerErrors(results)
          for (const result of results) expect(expectData(result, 202).status).toBe("deleting")
          expect((yield* successAudits("namespace.deleted")).filter((resource) => resource === ns)).toEqual([ns])
          expect(yield* sql`SELECT key FROM work_items WHERE kind = 'namespace.teardown' AND key = ${ns}`).toEqual([{ key: ns }])
        }
      }))

    it.effect("Presets renamed to one name at once, and a create with it: one wins, the rest 409, names stay unique", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("race-renames@example.com")
        const ns = yield* seedNamespace("race-renames")
        const path = `/namespaces/${ns}/presets`
        for (let round = 0; round < ROUNDS; round++) {
          const ids: Array<string> = []
          for (let i = 0; i < 3; i++) ids.push(expectData(yield* send(baseUrl, "POST", path, admin.headers, { name: `old-${round}-${i}`, template: {} }), 201).id)
          const name = `taken-${round}`
          const results = yield* race([
            ...ids.map((id) => send(baseUrl, "PATCH", `${path}/${id}`, admin.headers, { name })),
            send(baseUrl, "POST", path, admin.headers, { name, template: {} })
          ])
          noServerErrors(results)
          const winners = results.filter((r) => r.status === 200 || r.status === 201)
          expect(winners).toHaveLength(1)
          for (const loser of results.filter((r) => r.status >= 400)) expectError(loser, 409, "RESOURCE_CONFLICT")
          expect(yield* sql`SELECT id FROM presets WHERE namespace_id = ${ns} AND name = ${name}`).toEqual([{ id: winners[0]!.body.data.id }])
        }
      }))

    it.effect("a service key issued while its principal is deleted: issued before the deletion, or 400 after it", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("race-keys@example.com")
        for (let round = 0; round < 3 * ROUNDS; round++) {
          const principal = expectData(yield* send(baseUrl, "POST", "/iam/service-principals", admin.headers, { name: `racer ${round}` }), 201).id as string
          const [issued, deleted] = yield* race([
            send(baseUrl, "POST", "/api/auth/service-keys", admin.headers, { servicePrincipalId: principal, name: "k" }),
            send(baseUrl, "DELETE", `/iam/service-principals/${principal}`, admin.headers)
          ])
          noServerErrors([issued!, deleted!])
          expect(deleted!.status, deleted!.text).toBe(204)
          if (issued!.status !== 201) expectError(issued!, 400, "INVALID_REQUEST")
          // Deleting a principal leaves its keys (they stop working with it); a key may only have
          // been issued while the principal was live, so its issuance is recorded before the deletion.
          const order = yield* sql<{ kind: string }>`
            SELECT kind FROM audit_events WHERE outcome = 'success' AND (
              (kind = 'service-key.issued' AND details->>'servicePrincipalId' = ${principal})
              OR (kind = 'iam.service-principal.deleted' AND resource_id = ${principal}))
            ORDER BY id
          `
          expect(order.map((row) => row.kind)).toEqual(
            issued!.status === 201 ? ["service-key.issued", "iam.service-principal.deleted"] : ["iam.service-principal.deleted"]
          )
        }
      }))
  })
})
