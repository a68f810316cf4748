/**
 * Two concurrent retries of one failed Agent provisioning (SPEC 3, 4.4): only a `failed` item can
 * be retried, so the first retry queues the work and the second, which then finds it queued, is
 * 409; one `agent.provisioning-retried` event is recorded, not two.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { PgPool } from "@svc/core/db"
import { RequestId } from "@svc/core/schema"
import { Effect, Fiber, Schedule, TestServices } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

describe("Agent provisioning retry", () => {
  it.layer(apiTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("two concurrent retries of a failed item: one 202, one 409, one audit event", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const pool = yield* PgPool
        const admin = yield* seedAdmin("provision-retry-race@example.com")
        const ns = yield* seedNamespace("provision-retry-race")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const secret = expectData(yield* call("POST", "secrets", { name: "model-key", value: "sk-value" }), 201)
        const source = { kind: "secret", namespaceId: ns, id: secret.id }
        const admitted = expectData(yield* call("POST", "agents/provision", {
          requestId: RequestId.make(),
          name: "Racer",
          configuration: { kind: "agent", values: { agents: { defaults: { model: "m" } } } },
          harnessAuth: { method: "api_key", source }
        }), 202).provisioning
        // No worker runs here: the item fails as a permanent failure would leave it.
        yield* sql`
          UPDATE work_items SET state = 'failed', finished_at = now(), last_attempt_at = now(),
            last_attempt_code = 'RESOURCE_CONFLICT', last_attempt_message = 'An Agent with this name already exists in the Namespace.'
          WHERE key = ${admitted.id}
        `

        // Both retries are admitted while another connection holds the record, then race for it.
        const retry = call("POST", `agents/provision/${admitted.id}/retry`)
        const holder = yield* Effect.promise(() => pool.connect())
        yield* Effect.promise(() => holder.query("BEGIN"))
        yield* Effect.promise(() => holder.query("SELECT 1 FROM agent_provisioning WHERE id = $1 FOR UPDATE", [admitted.id]))
        const retries = yield* Effect.fork(Effect.all([retry, retry], { concurrency: 2 }))
        const waiting = sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%agent_provisioning%'
        `
        // Polled on the real clock (a test's default clock never advances by itself).
        yield* TestServices.provideLive(Effect.repeat(waiting, { until: (rows) => rows[0]!.n >= 2, schedule: Schedule.spaced("20 millis") }))
        yield* Effect.promise(() => holder.query("COMMIT"))
        holder.release()
        const answers = yield* Fiber.join(retries)

        expect(answers.map((r) => r.status).sort()).toEqual([202, 409])
        const conflict = answers.find((r) => r.status === 409)!
        expect(conflict.body.error).toEqual({ code: "RESOURCE_CONFLICT", message: "Only a failed provisioning can be retried." })
        const items = yield* sql<{ state: string }>`SELECT state FROM work_items WHERE key = ${admitted.id} ORDER BY created_at`
        expect(items.map((i) => i.state)).toEqual(["failed", "queued"])
        const audit = yield* sql<{ kind: string }>`SELECT kind FROM audit_events WHERE resource_id = ${admitted.id} ORDER BY id`
        expect(audit.map((a) => a.kind)).toEqual(["agent.provisioning-admitted", "agent.provisioning-retried"])
      }))
  })
})
