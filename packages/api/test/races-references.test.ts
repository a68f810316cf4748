/**
 * Deletes racing writes that reference what is deleted (SPEC 3 Namespace, 4.2 `NAMESPACE_NOT_EMPTY`,
 * 4.3 and 4.6 "409 while referenced", 2.16): whichever commits first, the other is refused with
 * the SPEC's code, and after both nothing points at a deleted row and nothing lives in a
 * `deleting` Namespace.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RequestId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, type Headers, type Result, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { noServerErrors, race, ROUNDS } from "./support/races.js"

const call = (baseUrl: string, headers: Headers) => (method: string, path: string, body?: unknown) => send(baseUrl, method, path, headers, body)

/** The create and the delete of what it references: exactly one wins, and the loser has the SPEC's answer. */
const expectOneOf = (create: Result, createCode: number, deleted: Result, deletedCode: number, outcomes: ReadonlyArray<readonly [number, string | null, number, string | null]>) => {
  noServerErrors([create, deleted])
  const seen = [create.status, create.status >= 400 ? create.body.error.code : null, deleted.status, deleted.status >= 400 ? deleted.body.error.code : null]
  expect(outcomes, JSON.stringify([create.body, deleted.body])).toContainEqual(seen)
  if (create.status >= 400) expectError(create, create.status, create.body.error.code)
  if (deleted.status >= 400) expectError(deleted, deleted.status, deleted.body.error.code)
  return { created: create.status === createCode, deleted: deleted.status === deletedCode }
}

describe("deletes racing references", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("creates racing DELETE /namespaces: either the create wins (409 NAMESPACE_NOT_EMPTY) or nothing outlives the Namespace", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("race-ns-delete@example.com")
        const api = call(baseUrl, admin.headers)
        const kinds: ReadonlyArray<readonly [string, (ns: string, cfg: string) => unknown]> = [
          ["secrets", () => ({ name: "s", value: "v" })],
          ["presets", () => ({ name: "p", template: {} })],
          ["configurations", () => ({ kind: "agent", values: {} })],
          ["service-accounts", () => ({ name: "sa" })]
        ]
        for (let round = 0; round < ROUNDS; round++) {
          for (const [collection, body] of kinds) {
            const ns = expectData(yield* api("POST", "/namespaces", { name: `race-del-${collection}-${round}` }), 201).id as string
            const [created, deleted] = yield* race([api("POST", `/namespaces/${ns}/${collection}`, body(ns, "")), api("DELETE", `/namespaces/${ns}`)])
            const won = expectOneOf(created!, 201, deleted!, 202, [
              [201, null, 409, "NAMESPACE_NOT_EMPTY"],
              [409, "RESOURCE_CONFLICT", 202, null],
              [404, "NOT_FOUND", 202, null]
            ])
            const table = collection.replace("-", "_")
            const rows = yield* sql`SELECT id FROM ${sql(table)} WHERE namespace_id = ${ns}`
            expect(rows.length).toBe(won.created ? 1 : 0)
            const [status] = yield* sql<{ status: string }>`SELECT status FROM namespaces WHERE id = ${ns}`
            expect(status!.status).toBe(won.deleted ? "deleting" : "provisioning")
          }
        }
      }))

    // An admitted provisioning does not hold the Namespace (SPEC 4.2 counts what exists); its
    // worker locks the Namespace FOR SHARE and fails permanently once it is `deleting`
    // (docs/decisions/agent-provisioning.md), so both may be accepted, as they are in sequence.
    it.effect("Agent provisioning racing DELETE /namespaces: refused after the deletion, never a 5xx", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("race-ns-agents@example.com")
        const api = call(baseUrl, admin.headers)
        for (let round = 0; round < ROUNDS; round++) {
          const ns = expectData(yield* api("POST", "/namespaces", { name: `race-del-provision-${round}` }), 201).id as string
          const [provisioned, deleted] = yield* race([
            api("POST", `/namespaces/${ns}/agents/provision`, { requestId: RequestId.make(), name: "p", configuration: { kind: "agent", values: {} } }),
            api("DELETE", `/namespaces/${ns}`)
          ])
          const won = expectOneOf(provisioned!, 202, deleted!, 202, [
            [202, null, 202, null],
            [409, "RESOURCE_CONFLICT", 202, null],
            [404, "NOT_FOUND", 202, null]
          ])
          expect((yield* sql`SELECT id FROM agent_provisioning WHERE namespace_id = ${ns}`).length).toBe(won.created ? 1 : 0)
        }
      }))

    it.effect("Secret DELETE racing a Configuration, an Agent or a provisioning that binds it: never a dangling reference", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("race-secret-delete@example.com")
        const ns = yield* seedNamespace("race-secret-delete")
        const api = call(baseUrl, admin.headers)
        const cfg = expectData(yield* api("POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: {} }), 201).id as string
        const users: ReadonlyArray<readonly [string, (secretId: string, round: number) => readonly [string, unknown], number]> = [
          ["configuration", (id) => ["configurations", { kind: "agent", values: {}, secretBindings: { TOOL: { source: { kind: "secret", namespaceId: ns, id } } } }], 201],
          ["agent", (id, round) => ["agents", { name: `a-${round}-${id}`, configurationId: cfg, harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id } } }], 201],
          ["provisioning", (id, round) => ["agents/provision", {
            requestId: RequestId.make(),
            name: `p-${round}-${id}`,
            configuration: { kind: "agent", values: {}, secretBindings: { TOOL: { source: { kind: "secret", namespaceId: ns, id } } } },
            harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id } }
          }], 202]
        ]
        for (let round = 0; round < ROUNDS; round++) {
          for (const [label, request, success] of users) {
            const secret = expectData(yield* api("POST", `/namespaces/${ns}/secrets`, { name: `${label}-${round}`, value: "v" }), 201).id as string
            const [path, body] = request(secret, round)
            const [used, deleted] = yield* race([api("POST", `/namespaces/${ns}/${path}`, body), api("DELETE", `/namespaces/${ns}/secrets/${secret}`)])
            const won = expectOneOf(used!, success, deleted!, 204, [
              [success, null, 409, "RESOURCE_CONFLICT"],
              [404, "NOT_FOUND", 204, null]
            ])
            expect((yield* sql`SELECT id FROM secrets WHERE id = ${secret}`).length).toBe(won.deleted ? 0 : 1)
          }
        }
        // Whatever won, every reference left names a Secret that exists.
        expect(yield* sql`
          SELECT secret_id FROM configuration_secret_refs WHERE secret_id NOT IN (SELECT id FROM secrets)
          UNION ALL SELECT secret_id FROM agent_secret_refs WHERE secret_id NOT IN (SELECT id FROM secrets)
        `).toEqual([])
      }))

    it.effect("Configuration DELETE racing an Agent create or PATCH that uses it: never a dangling reference", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("race-cfg-delete@example.com")
        const ns = yield* seedNamespace("race-cfg-delete")
        const api = call(baseUrl, admin.headers)
        const base = expectData(yield* api("POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: {} }), 201).id as string
        const patchable = expectData(yield* api("POST", `/namespaces/${ns}/agents`, { name: "patchable", configurationId: base }), 201).id as string
        for (let round = 0; round < ROUNDS; round++) {
          for (const via of ["create", "patch"] as const) {
            const cfg = expectData(yield* api("POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: {} }), 201).id as string
            const use = via === "create"
              ? api("POST", `/namespaces/${ns}/agents`, { name: `c-${round}`, configurationId: cfg })
              : api("PATCH", `/namespaces/${ns}/agents/${patchable}`, { configurationId: cfg })
            const [used, deleted] = yield* race([use, api("DELETE", `/namespaces/${ns}/configurations/${cfg}`)])
            const success = via === "create" ? 201 : 200
            const won = expectOneOf(used!, success, deleted!, 204, [
              [success, null, 409, "RESOURCE_CONFLICT"],
              [404, "NOT_FOUND", 204, null]
            ])
            expect((yield* sql`SELECT id FROM configurations WHERE id = ${cfg}`).length).toBe(won.deleted ? 0 : 1)
            if (via === "patch" && won.created) expectData(yield* api("PATCH", `/namespaces/${ns}/agents/${patchable}`, { configurationId: base }), 200)
          }
        }
        expect(yield* sql`
          SELECT id FROM agents WHERE configuration_id NOT IN (SELECT id FROM configurations)
          UNION ALL SELECT id FROM agent_revisions WHERE configuration_id NOT IN (SELECT id FROM configurations)
        `).toEqual([])
      }))
  })
})
