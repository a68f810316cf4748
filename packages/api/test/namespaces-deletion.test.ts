/**
 * Namespace deletion (SPEC 3, 6): a teardown that fails is audited, attributed to the principal
 * that asked for the deletion; once that teardown has given up, a repeat `DELETE` queues a new
 * one and adds its own event, and the earlier failure audit remains. The teardown runs here as
 * the worker runs it, against a Compute host that answers "unavailable" (`testing/drivers.ts`),
 * then the local one, over the real database and API.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { NamespacesRepo } from "@svc/core/db"
import * as Compute from "@svc/core/drivers/compute"
import { teardownNamespace } from "@svc/worker"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { unavailableCompute } from "../../../testing/drivers.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, seedAdmin, send } from "./support/iamServer.js"
import { attemptContext as attemptFor } from "./support/workAttempt.js"

const attemptContext = (key: string, attempt: number) => attemptFor("namespace.teardown", key, attempt)

describe("Namespace deletion", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a failed teardown is audited, attributed; after it gave up a repeat DELETE retries it with its own event; the failure audit remains", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("ns-teardown-audit@example.com")
        const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "teardown-audit" }), 201)
        expect(expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202).status).toBe("deleting")
        const items = sql<{ state: string; payload: unknown }>`
          SELECT state, payload FROM work_items WHERE kind = 'namespace.teardown' AND key = ${created.id} ORDER BY created_at
        `
        const payload = { namespaceId: created.id, initiatorPrincipalId: admin.principalId }
        expect(yield* items).toEqual([{ state: "queued", payload }])

        const teardown = (attempt: number, compute: Layer.Layer<Compute.ComputeDriver>) =>
          teardownNamespace(payload, attemptContext(created.id, attempt)).pipe(
            Effect.provide(compute),
            Effect.provide(NamespacesRepo.Default),
            Effect.exit
          )
        const audits = sql<{ kind: string; outcome: string; actor: string | null; details: unknown }>`
          SELECT kind, outcome, actor_principal_id AS actor, details FROM audit_events
          WHERE resource_kind = 'namespace' AND resource_id = ${created.id} ORDER BY id
        `
        const failed = {
          kind: "namespace.deletion-failed",
          outcome: "failure",
          actor: admin.principalId,
          details: { code: "COMPUTE_UNAVAILABLE", attempt: 1, permanent: false }
        }

        // The first failed attempt is audited; its backoff retries are not.
        expect(Exit.isFailure(yield* teardown(1, unavailableCompute))).toBe(true)
        expect(Exit.isFailure(yield* teardown(2, unavailableCompute))).toBe(true)
        expect((yield* audits).map((a) => a.kind)).toEqual(["namespace.created", "namespace.deleted", "namespace.deletion-failed"])
        expect((yield* audits)[2]).toEqual(failed)

        // While the teardown is still queued, a repeat changes nothing.
        expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202)
        expect(yield* items).toHaveLength(1)
        expect(yield* audits).toHaveLength(3)

        // The teardown gives up (as the engine fails it past its deadline): a repeat retries it.
        yield* sql`
          UPDATE work_items SET state = 'failed', finished_at = now()
          WHERE kind = 'namespace.teardown' AND key = ${created.id}
        `
        expect(expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202).status).toBe("deleting")
        expect(yield* items).toEqual([{ state: "failed", payload }, { state: "queued", payload }])
        expect((yield* audits).map((a) => [a.kind, a.actor])).toEqual([
          ["namespace.created", admin.principalId],
          ["namespace.deleted", admin.principalId],
          ["namespace.deletion-failed", admin.principalId],
          ["namespace.deletion-retried", admin.principalId]
        ])
        expect((yield* audits)[2]).toEqual(failed)

        // Once the host is back the teardown completes: 404, and every earlier record remains.
        const dataDir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "svc-ns-teardown-audit-")))
        const local = Layer.succeed(Compute.ComputeDriver, Compute.makeLocalCompute(dataDir, { confinement: { kind: "shared-user" } }))
        expect(Exit.isSuccess(yield* teardown(1, local))).toBe(true)
        yield* Effect.promise(() => fs.rm(dataDir, { recursive: true, force: true }))
        expect((yield* send(baseUrl, "GET", `/namespaces/${created.id}`, admin.headers)).status).toBe(404)
        expect((yield* audits).map((a) => a.kind)).toEqual([
          "namespace.created",
          "namespace.deleted",
          "namespace.deletion-failed",
          "namespace.deletion-retried"
        ])
      }))
  })
})
