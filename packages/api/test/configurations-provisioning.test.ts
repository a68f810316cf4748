/**
 * SPEC 4.3: `DELETE .../configurations/{id}` is 409 while the Configuration is referenced. A
 * provisioning record creates its Configuration in one phase and the Agent that references it in
 * the next (packages/worker/src/agents/provision.ts); between the two the record's live work is
 * the referrer. No worker runs here: the first phase is written as the worker writes it.
 * SPEC 7.3: a Configuration created in an external Namespace before provisioning completes is 409
 * NAMESPACE_NOT_READY, through Agent provisioning as through POST .../configurations.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RequestId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

describe("Configurations referenced by provisioning", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a Configuration created for queued or running provisioning is 409 to DELETE; once that work failed it can go", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("cfg-provisioning@example.com")
        const ns = yield* seedNamespace("cfg-provisioning")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const work = expectData(yield* call("POST", "agents/provision", {
          requestId: RequestId.make(),
          name: "bot",
          configuration: { kind: "agent", values: { agents: {} } }
        }), 202)
        const workId: string = work.provisioning.id
        // The `configuration` phase, as the worker commits it: the Configuration and its id on the record.
        const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: { agents: {} } }), 201)
        yield* sql`UPDATE agent_provisioning SET configuration_id = ${configuration.id}, phase = 'transport' WHERE id = ${workId}`
        const path = `configurations/${configuration.id}`

        for (const state of ["queued", "running"]) {
          yield* sql`UPDATE work_items SET state = ${state}, lease_owner = ${state === "running" ? "probe" : null},
            lease_expires_at = ${state === "running" ? new Date(Date.now() + 60_000) : null}
            WHERE kind = 'agent.provision' AND key = ${workId}`
          const refused = yield* call("DELETE", path)
          expectError(refused, 409, "RESOURCE_CONFLICT")
          expect(refused.body.error.message).toContain(workId)
          expect(expectData(yield* call("GET", path), 200)).toEqual(configuration)
        }

        // Failed work can only be retried, and a retry then finds the Configuration gone (NOT_FOUND).
        yield* sql`UPDATE work_items SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL, finished_at = now()
          WHERE kind = 'agent.provision' AND key = ${workId}`
        expect((yield* call("DELETE", path)).status).toBe(204)
        expectError(yield* call("GET", path), 404, "NOT_FOUND")
      }))

    it.effect("provisioning's inline Configuration into an external Namespace still provisioning is 409 NAMESPACE_NOT_READY and writes nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("cfg-provisioning-external@example.com")
        const ns = yield* seedNamespace("cfg-provisioning-external")
        yield* sql`UPDATE namespaces SET status = 'provisioning', existing_namespace = 'prepared-by-operator' WHERE id = ${ns}`
        const provision = () => send(baseUrl, "POST", `/namespaces/${ns}/agents/provision`, admin.headers, {
          requestId: RequestId.make(),
          name: "bot",
          configuration: { kind: "agent", values: {} }
        })
        const written = sql<{ records: number; work: number; configurations: number }>`
          SELECT (SELECT count(*)::int FROM agent_provisioning WHERE namespace_id = ${ns}) AS records,
            (SELECT count(*)::int FROM work_items WHERE kind = 'agent.provision') AS work,
            (SELECT count(*)::int FROM configurations WHERE namespace_id = ${ns}) AS configurations
        `
        const before = yield* written
        expectError(yield* provision(), 409, "NAMESPACE_NOT_READY")
        expect(yield* written).toEqual(before)
        yield* sql`UPDATE namespaces SET status = 'ready' WHERE id = ${ns}`
        expect(expectData(yield* provision(), 202).provisioning.status).toBe("queued")
      }))
  })
})
