/**
 * A stop requested while the previous stop's work is still running (SPEC 3: `POST .../stop` →
 * desired `stopped`; the worker removes execution, then clears `activeRevisionId`). The new stop
 * queues no work of its own (one unfinished `agent.stop` per Agent), so the running one must stop
 * whatever revision is active when it finishes, not only the one it read when it started.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { stopAgent } from "@svc/worker"
import { ComputeDriver } from "@svc/core/drivers/compute"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { unavailableCompute } from "../../../testing/drivers.js"
import { TestServer } from "../../../testing/server.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, expectData, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

describe("Agent stop", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a stop that found the stop work running is not lost: the revision activated meanwhile is stopped and cleared", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("stop-race@example.com")
        const ns = yield* seedNamespace("stop-race")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const { agent } = yield* setUpDeployableAgent(ns, call)
        // The first revision runs (as its deployment would leave it).
        const first = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202).id as string
        yield* sql`UPDATE agents SET active_revision_id = ${first} WHERE id = ${agent.id}`
        yield* sql`UPDATE work_items SET state = 'succeeded', finished_at = now() WHERE key = ${first}`

        // The first stop: its work is claimed, and its worker is stopping the first revision.
        expect(expectData(yield* call("POST", `agents/${agent.id}/stop`), 202).desiredRuntimeState).toBe("stopped")
        yield* sql`
          UPDATE work_items SET state = 'running', lease_owner = 'stop-race-worker', lease_expires_at = now() + interval '1 hour', attempt_count = 1
          WHERE kind = 'agent.stop' AND key = ${agent.id}
        `
        const entered = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const stopped: Array<string> = []
        const compute = Layer.effect(ComputeDriver, Effect.map(ComputeDriver, (driver) => ({
          ...driver,
          stopGateway: (ref: { readonly revisionId: string }) =>
            Effect.sync(() => stopped.push(ref.revisionId)).pipe(
              Effect.zipRight(Effect.suspend(() => stopped.length === 1 ? Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(gate)) : Effect.void))
            )
        }))).pipe(Layer.provide(unavailableCompute))
        const running = yield* Effect.fork(stopAgent({ namespaceId: ns, agentId: agent.id }).pipe(Effect.provide(compute)))
        yield* Deferred.await(entered)

        // Meanwhile a deployment activates a second revision, and the Agent is stopped again.
        const second = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202).id as string
        yield* sql`UPDATE agents SET active_revision_id = ${second} WHERE id = ${agent.id}`
        yield* sql`UPDATE work_items SET state = 'succeeded', finished_at = now() WHERE key = ${second}`
        expect(expectData(yield* call("POST", `agents/${agent.id}/stop`), 202).desiredRuntimeState).toBe("stopped")
        const items = yield* sql<{ state: string }>`SELECT state FROM work_items WHERE kind = 'agent.stop' AND key = ${agent.id}`
        expect(items.map((item) => item.state)).toEqual(["running"])

        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(running)
        expect(stopped).toEqual([first, second])
        const after = expectData(yield* call("GET", `agents/${agent.id}`), 200)
        expect(after.desiredRuntimeState).toBe("stopped")
        expect(after.activeRevisionId).toBeUndefined()
      }))
  })
})
