/**
 * Agent deletion (SPEC 3, 6): another actor may take a deletion over only once its initiator
 * lost `agent:delete`. A teardown that fails is audited (attributed to the principal that
 * started the deletion), a repeat `DELETE` adds its own event, and the earlier failure audits
 * remain. The teardown runs here as the worker runs it, against a Compute host that answers
 * "unavailable" (`testing/drivers.ts`), then the local one, over the real database and API.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { teardownAgent } from "@svc/worker"
import * as Compute from "@svc/core/drivers/compute"
import { Deferred, Effect, Exit, Fiber, Layer, Schedule, TestServices } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { unavailableCompute } from "../../../testing/drivers.js"
import { bindRole, createServicePrincipal, insertRestriction, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { RoleId } from "@svc/core/schema"
import { BuiltinRoles } from "@svc/core/iam"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, bindViewerOn, expectData, expectError, seedAdmin, seedNamespace, send, withKey } from "./support/iamServer.js"
import { attemptContext as attemptFor } from "./support/workAttempt.js"

const attemptContext = (key: string, attempt: number) => attemptFor("agent.teardown", key, attempt)

describe("Agent deletion", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a failed teardown is audited once per teardown, attributed; a repeat DELETE adds an event and keeps it; the removal is attributed", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("teardown-audit@example.com")
        const ns = yield* seedNamespace("teardown-audit")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* call("POST", "agents", { name: "bot", configurationId: configuration.id }), 201)
        expect(expectData(yield* call("DELETE", `agents/${agent.id}`), 202).status).toBe("deleting")

        const teardown = (attempt: number, compute = unavailableCompute) =>
          teardownAgent({ namespaceId: ns, agentId: agent.id }, attemptContext(agent.id, attempt)).pipe(
            Effect.provide(compute),
            Effect.exit
          )
        const audits = sql<{ kind: string; outcome: string; actor: string | null; details: unknown }>`
          SELECT kind, outcome, actor_principal_id AS actor, details FROM audit_events
          WHERE resource_kind = 'agent' AND resource_id = ${agent.id} ORDER BY id
        `
        const failed = {
          kind: "agent.deletion-failed",
          outcome: "failure",
          actor: admin.principalId,
          details: { code: "COMPUTE_UNAVAILABLE", attempt: 1, permanent: false }
        }

        // The first failed attempt is audited; its retries are not (they would flood the log).
        const first = yield* teardown(1)
        expect(Exit.isFailure(first)).toBe(true)
        yield* teardown(2)
        const after = yield* audits
        expect(after.map((a) => a.kind)).toEqual(["agent.created", "agent.deleted", "agent.deletion-failed"])
        expect(after[2]).toEqual(failed)

        // A repeat DELETE adds its own event; the failure audit remains.
        expectData(yield* call("DELETE", `agents/${agent.id}`), 202)
        expect((yield* audits).map((a) => a.kind)).toEqual(["agent.created", "agent.deleted", "agent.deletion-failed", "agent.deletion-retried"])
        expect((yield* audits)[2]).toEqual(failed)
        // The Agent stays deleting.
        expect(expectData(yield* call("GET", `agents/${agent.id}`), 200).status).toBe("deleting")

        // Once the host is back the teardown completes; the removal is attributed too, and every
        // earlier record remains.
        const dataDir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "svc-teardown-audit-")))
        const local = Layer.succeed(Compute.ComputeDriver, Compute.makeLocalCompute(dataDir, { confinement: { kind: "shared-user" } }))
        expect(Exit.isSuccess(yield* teardown(1, local))).toBe(true)
        yield* Effect.promise(() => fs.rm(dataDir, { recursive: true, force: true }))
        const final = yield* audits
        expect(final.map((a) => [a.kind, a.actor])).toEqual([
          ["agent.created", admin.principalId],
          ["agent.deleted", admin.principalId],
          ["agent.deletion-failed", admin.principalId],
          ["agent.deletion-retried", admin.principalId],
          ["agent.removed", admin.principalId]
        ])
        expect(yield* sql`SELECT 1 FROM agents WHERE id = ${agent.id}`).toHaveLength(0)
      }))

    it.effect("SPEC 3: the removal takes the bindings on the Agent and of its principal, the bindings on those (transitively) and their Restrictions", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("teardown-policy@example.com")
        const ns = yield* seedNamespace("teardown-policy")
        const holder = yield* createServicePrincipal("teardown-policy-holder", ns)
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const bind = (kind: string, id: string) =>
          Effect.map(bindViewerOn(baseUrl, admin.headers, ns, holder, { kind, id }), (created) => created.id as string)
        const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* call("POST", "agents", { name: "bot", configurationId: configuration.id }), 201)
        const onAgent = yield* bind("agent", agent.id)
        const onOnAgent = yield* bind("iam_access_binding", onAgent)
        const ofPrincipal = yield* bindRole(agent.servicePrincipalId, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        const onOfPrincipal = yield* bind("iam_access_binding", ofPrincipal)
        const onOnOfPrincipal = yield* bind("iam_access_binding", onOfPrincipal)
        const doomed = [onAgent, onOnAgent, ofPrincipal, onOfPrincipal, onOnOfPrincipal]
        for (const id of doomed) yield* insertRestriction(holder, "iam_access_binding", id)
        const kept = yield* bind("namespace", ns)
        const onKept = yield* bind("iam_access_binding", kept)

        expect(expectData(yield* call("DELETE", `agents/${agent.id}`), 202).status).toBe("deleting")
        const dataDir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "svc-teardown-policy-")))
        const local = Layer.succeed(Compute.ComputeDriver, Compute.makeLocalCompute(dataDir, { confinement: { kind: "shared-user" } }))
        const removed = yield* teardownAgent({ namespaceId: ns, agentId: agent.id }, attemptContext(agent.id, 1)).pipe(
          Effect.provide(local),
          Effect.exit
        )
        yield* Effect.promise(() => fs.rm(dataDir, { recursive: true, force: true }))
        expect(Exit.isSuccess(removed)).toBe(true)
        expect(yield* sql`SELECT id FROM access_bindings WHERE id IN ${sql.in(doomed)}`).toEqual([])
        expect(yield* sql`SELECT id FROM restrictions WHERE resource_id IN ${sql.in(doomed)}`).toEqual([])
        const survivors = yield* sql<{ id: string }>`SELECT id FROM access_bindings WHERE id IN ${sql.in([kept, onKept])}`
        expect(survivors.map((row) => row.id).sort()).toEqual([kept, onKept].sort())
      }))

    it.effect("SPEC 3: another actor takes a deletion over only once its initiator lost agent:delete; a repeat after failure queues a new teardown", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("teardown-takeover@example.com")
        const ns = yield* seedNamespace("teardown-takeover")
        const call = (method: string, path: string, headers = admin.headers, body?: unknown) =>
          send(baseUrl, method, `/namespaces/${ns}/${path}`, headers, body)
        const configuration = expectData(yield* call("POST", "configurations", admin.headers, { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* call("POST", "agents", admin.headers, { name: "bot", configurationId: configuration.id }), 201)
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, 'deleter', ARRAY['agent:read', 'agent:delete'])`
        const deleter = (name: string) =>
          Effect.gen(function* () {
            const principal = yield* createServicePrincipal(name, ns)
            yield* bindRole(principal, role, { kind: "namespace", id: ns })
            return { principal, headers: withKey((yield* insertServiceKey(principal, { namespaceId: ns })).key) }
          })
        const first = yield* deleter("teardown-first")
        const second = yield* deleter("teardown-second")
        const initiator = sql<{ deletion_initiator: string }>`SELECT deletion_initiator FROM agents WHERE id = ${agent.id}`

        expect(expectData(yield* call("DELETE", `agents/${agent.id}`, first.headers), 202).status).toBe("deleting")
        expectError(yield* call("DELETE", `agents/${agent.id}`, second.headers), 409, "RESOURCE_CONFLICT")
        expect(yield* initiator).toEqual([{ deletion_initiator: first.principal }])
        // The initiator repeating it is a retry.
        expectData(yield* call("DELETE", `agents/${agent.id}`, first.headers), 202)

        yield* sql`DELETE FROM access_bindings WHERE principal_id = ${first.principal}`
        expect(expectData(yield* call("DELETE", `agents/${agent.id}`, second.headers), 202).status).toBe("deleting")
        expect(yield* initiator).toEqual([{ deletion_initiator: second.principal }])
        const audits = yield* sql<{ kind: string; actor: string }>`
          SELECT kind, actor_principal_id AS actor FROM audit_events
          WHERE resource_kind = 'agent' AND resource_id = ${agent.id} AND outcome = 'success' ORDER BY id
        `
        expect(audits).toEqual([
          { kind: "agent.created", actor: admin.principalId },
          { kind: "agent.deleted", actor: first.principal },
          { kind: "agent.deletion-retried", actor: first.principal },
          { kind: "agent.deletion-retried", actor: second.principal }
        ])

        // SPEC 3: once the teardown gave up, a repeat DELETE replenishes its attempts (a new item).
        const teardowns = sql<{ state: string }>`SELECT state FROM work_items WHERE kind = 'agent.teardown' AND key = ${agent.id} ORDER BY created_at`
        expect(yield* teardowns).toEqual([{ state: "queued" }])
        yield* sql`UPDATE work_items SET state = 'failed', finished_at = now() WHERE kind = 'agent.teardown' AND key = ${agent.id}`
        expectData(yield* call("DELETE", `agents/${agent.id}`, second.headers), 202)
        expect(yield* teardowns).toEqual([{ state: "failed" }, { state: "queued" }])
      }))

    it.effect("a binding on a revision committed while the removal runs goes with the revision, not after it", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("teardown-revision-race@example.com")
        const ns = yield* seedNamespace("teardown-revision-race")
        const holder = yield* createServicePrincipal("teardown-revision-holder", ns)
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const { agent } = yield* setUpDeployableAgent(ns, call)
        const revision = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202).id as string
        expect(expectData(yield* call("DELETE", `agents/${agent.id}`), 202).status).toBe("deleting")

        // A binding create on the revision, as the API makes it: its target locked FOR KEY SHARE,
        // the binding inserted, the commit held back until the removal is waiting on a lock.
        const inserted = yield* Deferred.make<string>()
        const commit = yield* Deferred.make<void>()
        const creator = yield* Effect.fork(sql.withTransaction(Effect.gen(function* () {
          yield* sql`SELECT 1 FROM agent_revisions WHERE id = ${revision} FOR KEY SHARE`
          const id = yield* bindRole(holder, BuiltinRoles.namespaceViewer.id, { kind: "agent_revision", id: revision, namespaceId: ns })
          yield* Deferred.succeed(inserted, id)
          yield* Deferred.await(commit)
        })))
        const binding = yield* Deferred.await(inserted)
        const dataDir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "svc-teardown-race-")))
        const local = Layer.succeed(Compute.ComputeDriver, Compute.makeLocalCompute(dataDir, { confinement: { kind: "shared-user" } }))
        const removal = yield* Effect.fork(teardownAgent({ namespaceId: ns, agentId: agent.id }, attemptContext(agent.id, 1)).pipe(
          Effect.provide(local),
          Effect.exit
        ))
        const waiting = sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
        // Polled on the real clock (a test's default clock never advances by itself).
        yield* TestServices.provideLive(Effect.repeat(waiting, { until: (rows) => rows[0]!.n > 0, schedule: Schedule.spaced("20 millis") }))
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(creator)
        const removed = yield* Fiber.join(removal)
        yield* Effect.promise(() => fs.rm(dataDir, { recursive: true, force: true }))
        expect(Exit.isSuccess(removed)).toBe(true)
        expect(yield* sql`SELECT 1 FROM agent_revisions WHERE id = ${revision}`).toHaveLength(0)
        expect(yield* sql`SELECT id FROM access_bindings WHERE id = ${binding}`).toEqual([])
      }))
  })
})
