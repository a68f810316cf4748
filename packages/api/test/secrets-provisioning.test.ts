/**
 * A Secret that admitted Agent provisioning still needs (its Configuration's bindings before the
 * Configuration is written, its harness Secret before the Agent is) is 409 to DELETE while that
 * work is queued or running, as a Configuration created for it is (configurations-provisioning
 * test; docs/decisions/secrets.md). Otherwise the worker's next phase hits the foreign key and
 * the provisioning fails for good with NOT_FOUND. No worker runs here.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RequestId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

describe("Secrets named by pending provisioning", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a Secret the provisioning binds or authenticates with is 409 to DELETE while its work is queued or running; once failed it can go", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("secret-provisioning@example.com")
        const ns = yield* seedNamespace("secret-provisioning")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const tool = expectData(yield* call("POST", "secrets", { name: "tool-token", value: "tool-value" }), 201)
        const harness = expectData(yield* call("POST", "secrets", { name: "model-key", value: "sk-value" }), 201)
        const unused = expectData(yield* call("POST", "secrets", { name: "unused", value: "other" }), 201)
        const source = (id: string) => ({ kind: "secret", namespaceId: ns, id })
        const work = expectData(yield* call("POST", "agents/provision", {
          requestId: RequestId.make(),
          name: "bot",
          configuration: { kind: "agent", values: { agents: {} }, secretBindings: { TOOL_TOKEN: { source: source(tool.id) } } },
          harnessAuth: { method: "api_key", source: source(harness.id) }
        }), 202)
        const workId: string = work.provisioning.id
        const secrets = sql<{ id: string }>`SELECT id FROM secrets WHERE namespace_id = ${ns} ORDER BY name`

        for (const state of ["queued", "running"]) {
          yield* sql`UPDATE work_items SET state = ${state}, lease_owner = ${state === "running" ? "probe" : null},
            lease_expires_at = ${state === "running" ? new Date(Date.now() + 60_000) : null}
            WHERE kind = 'agent.provision' AND key = ${workId}`
          for (const secret of [tool, harness]) {
            const refused = yield* call("DELETE", `secrets/${secret.id}`)
            expectError(refused, 409, "RESOURCE_CONFLICT")
            expect(refused.body.error.message).toBe(`The Secret is referenced by Agent provisioning ${workId}; remove the reference first.`)
            expect(expectData(yield* call("GET", `secrets/${secret.id}`), 200)).toEqual(secret)
          }
        }
        expect((yield* secrets).map((row) => row.id).sort()).toEqual([tool.id, harness.id, unused.id].sort())
        // A Secret the request does not name is not held by it.
        expect((yield* call("DELETE", `secrets/${unused.id}`)).status).toBe(204)

        // Failed work holds nothing (as for a Configuration): a retry then fails NOT_FOUND in the worker.
        yield* sql`UPDATE work_items SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL, finished_at = now()
          WHERE kind = 'agent.provision' AND key = ${workId}`
        for (const secret of [tool, harness]) {
          expect((yield* call("DELETE", `secrets/${secret.id}`)).status).toBe(204)
          expectError(yield* call("GET", `secrets/${secret.id}`), 404, "NOT_FOUND")
        }
        expect(yield* secrets).toEqual([])
      }))
  })
})
