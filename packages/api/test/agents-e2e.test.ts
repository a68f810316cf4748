/**
 * The Agent lifecycle end to end (issue: agents and deployments): the real HTTP API, the real
 * worker engine with the `local` Compute Driver, and real OpenClaw gateways (child processes of
 * about 1 GiB) answered by a fake OpenAI-compatible model server on loopback. Namespace →
 * Configuration → Secret → Agent → deploy → succeeded → a chat completion through the gateway →
 * redeploy (new revision, old one retired) → a rejected model key ends a deployment with
 * RUNTIME_AUTHENTICATION_FAILED → stop → delete. Serial and few on purpose.
 */
import { describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Compute from "@svc/core/drivers/compute"
import type { NamespaceId } from "@svc/core/schema"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { until, workItemProgress } from "../../../testing/poll.js"
import { groupAlive, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { expectData, expectError, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { gatewayFixture, gatewayWorldLayer } from "./support/gatewayWorld.js"
import { fakeModelValues, setUpModelAgent } from "./support/modelAgent.js"

const GOOD_KEY = "sk-e2e-good-5f1c9a7e3b"
const BAD_KEY = "sk-e2e-rejected-0d2e4f"
const world = await gatewayFixture("svc-e2e-", GOOD_KEY)
const dataDir = world.dataDir

const layer = gatewayWorldLayer(dataDir)

describe("an Agent's whole life on a real gateway", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("create, deploy, chat, redeploy, a rejected key, stop, delete", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("e2e-admin@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)

        const { ns, secret, configuration, agent, agentPath } = yield* setUpModelAgent(call, {
          namespace: "e2e",
          agent: "e2e-bot",
          modelKey: GOOD_KEY,
          fake,
          initialWorkspaceFiles: { "SOUL.md": "# Soul\nStaged before the first start.\n" }
        })

        const deployment = (revisionId: string) => call("GET", `${agentPath}/deployments/${revisionId}`)
        const terminal = (r: { body: { data?: { status?: string } } }) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed"

        // First deployment.
        const first = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const firstDone = expectData(yield* until(deployment(first.id), terminal, { progress: workItemProgress(first.id) }), 200)
        expect(firstDone).toEqual({
          deploymentId: first.id,
          namespaceId: ns,
          agentId: agent.id,
          status: "succeeded",
          error: null,
          progress: null,
          warnings: []
        })
        expect(expectData(yield* call("GET", agentPath), 200)).toMatchObject({ activeRevisionId: first.id, desiredRuntimeState: "running" })

        // A chat completion through the gateway, answered by the fake model with the Agent's key.
        const local = Compute.makeLocalCompute(dataDir, { runtimeRoot: testRuntimeRoot() })
        const ref = { namespaceId: ns as NamespaceId, agentId: agent.id as string, revisionId: first.id as string }
        const endpoint = yield* local.privateEndpoint(ref)
        const answer = yield* Effect.promise(async () => {
          const response = await fetch(`${endpoint.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${endpoint.token}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: "hello" }] })
          })
          return { status: response.status, body: (await response.json()) as { choices: Array<{ message: { content: string } }> } }
        })
        expect(answer.status).toBe(200)
        expect(answer.body.choices[0]!.message.content).toBe(fake.reply)

        // Initial workspace files were applied before the first execution, then dropped.
        const files = `${agentPath}/workspace/files`
        expect(expectData(yield* call("GET", `${files}/SOUL.md`), 200)).toEqual({ name: "SOUL.md", content: "# Soul\nStaged before the first start.\n" })
        expect(yield* sql`SELECT 1 FROM agent_initial_files WHERE agent_id = ${agent.id}`).toHaveLength(0)
        // Workspace writes go to the running gateway's workspace and are audited.
        expect(expectData(yield* call("PUT", `${files}/SOUL.md`, { content: "# Soul\nEdited. ✓\n" }), 200)).toEqual({ name: "SOUL.md", size: 19 })
        expect(expectData(yield* call("PUT", `${files}/USER.md`, { content: "# User\nWrites tests.\n" }), 200)).toEqual({ name: "USER.md", size: 21 })
        expect(expectData(yield* call("GET", `${files}/USER.md`), 200)).toEqual({ name: "USER.md", content: "# User\nWrites tests.\n" })
        const writes = yield* sql<{ details: unknown }>`SELECT details FROM audit_events WHERE kind = 'agent.workspace-file-written' ORDER BY id`
        expect(writes.map((w) => w.details)).toEqual([
          { name: "SOUL.md", size: 19, revisionId: first.id },
          { name: "USER.md", size: 21, revisionId: first.id }
        ])

        // The write lands but its audit cannot be committed: 503 UNKNOWN_OUTCOME; reading tells.
        yield* sql.unsafe(`
          CREATE FUNCTION refuse_workspace_audit() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.kind = 'agent.workspace-file-written' THEN RAISE EXCEPTION 'audit store refused'; END IF;
            RETURN NEW;
          END $$
        `)
        yield* sql.unsafe(`CREATE TRIGGER refuse_workspace_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_workspace_audit()`)
        expectError(yield* call("PUT", `${files}/IDENTITY.md`, { content: "# Identity\n" }), 503, "UNKNOWN_OUTCOME")
        yield* sql.unsafe(`DROP TRIGGER refuse_workspace_audit ON audit_events`)
        expect(expectData(yield* call("GET", `${files}/IDENTITY.md`), 200).content).toBe("# Identity\n")

        // Diagnostics, gathered live from the gateway.
        const diagnostics = expectData(yield* call("POST", `${agentPath}/deployments/${first.id}/diagnostics`), 200)
        expect(diagnostics.revisionId).toBe(first.id)
        expect(diagnostics.checks.map((c: { component: string; check: string; state: string }) => `${c.component}.${c.check}:${c.state}`)).toEqual([
          "runtime.installed:succeeded",
          "gateway.process:succeeded",
          "gateway.live:succeeded",
          "gateway.ready:succeeded",
          "model.auth:succeeded"
        ])

        // PATCH and redeploy: a new revision; the old one is retired.
        expectData(yield* call("PATCH", `/namespaces/${ns}/configurations/${configuration.id}`, { values: fakeModelValues(fake, "Fake second") }), 200)
        const second = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expect(second.configurationGeneration).toBe(2)
        expect(expectData(yield* until(deployment(second.id), terminal, { progress: workItemProgress(second.id) }), 200).status).toBe("succeeded")
        expect(expectData(yield* call("GET", agentPath), 200).activeRevisionId).toBe(second.id)
        const retired = yield* sql<{ id: string; retired: boolean }>`
          SELECT id, retired_at IS NOT NULL AS retired FROM agent_revisions WHERE agent_id = ${agent.id} ORDER BY created_at
        `
        expect(retired).toEqual([{ id: first.id, retired: true }, { id: second.id, retired: false }])
        // Edits survive redeployment: initial files are never replayed.
        expect(expectData(yield* call("GET", `${agentPath}/workspace/files/SOUL.md`), 200).content).toBe("# Soul\nEdited. ✓\n")
        // Terminal results never change.
        expect(expectData(yield* deployment(first.id), 200)).toEqual(firstDone)

        // A rejected model key ends the deployment early with RUNTIME_AUTHENTICATION_FAILED.
        expectData(yield* call("PATCH", `/namespaces/${ns}/secrets/${secret.id}`, { value: BAD_KEY }), 200)
        const third = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        const thirdDone = expectData(yield* until(deployment(third.id), terminal, { progress: workItemProgress(third.id) }), 200)
        expect(thirdDone).toEqual({
          deploymentId: third.id,
          namespaceId: ns,
          agentId: agent.id,
          status: "failed",
          error: { code: "RUNTIME_AUTHENTICATION_FAILED", message: expect.any(String) },
          progress: null,
          warnings: []
        })
        expect(thirdDone.error.message).not.toContain(BAD_KEY)

        // Stop: execution removed, activeRevisionId cleared; history stays.
        expectData(yield* call("PATCH", `/namespaces/${ns}/secrets/${secret.id}`, { value: GOOD_KEY }), 200)
        const record = JSON.parse(yield* Effect.promise(() =>
          fs.readFile(path.join(Compute.namespaceDirectory(dataDir, ns), "agents", agent.id, "gateway.json"), "utf8"))) as { pid: number }
        expect(expectData(yield* call("POST", `${agentPath}/stop`), 202).desiredRuntimeState).toBe("stopped")
        const stopped = yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, { progress: workItemProgress(agent.id) })
        expect(stopped.body.data.desiredRuntimeState).toBe("stopped")
        expect(yield* Effect.promise(() => groupAlive(record.pid))).toBe(false)
        expect(expectData(yield* call("GET", `${agentPath}/revisions`), 200)).toHaveLength(3)

        // Delete: the Agent, its revisions, its principal and bindings go; the name is free again.
        expect(expectData(yield* call("DELETE", agentPath), 202).status).toBe("deleting")
        yield* until(call("GET", agentPath), (r) => r.status === 404, { progress: workItemProgress(agent.id) })
        expectError(yield* call("GET", `${agentPath}/revisions/${first.id}`), 404, "NOT_FOUND")
        const leftovers = yield* sql<{ n: number }>`
          SELECT (SELECT count(*)::int FROM principals WHERE id = ${agent.servicePrincipalId})
            + (SELECT count(*)::int FROM access_bindings WHERE principal_id = ${agent.servicePrincipalId})
            + (SELECT count(*)::int FROM agent_revisions WHERE agent_id = ${agent.id}) AS n
        `
        expect(leftovers[0]!.n).toBe(0)
        expect(yield* Effect.promise(() => fs.stat(path.join(Compute.namespaceDirectory(dataDir, ns), "agents", agent.id)).then(() => true, () => false))).toBe(false)
        expectData(yield* call("POST", `/namespaces/${ns}/agents`, { name: "e2e-bot", configurationId: configuration.id }), 201)

        // No credential value anywhere: responses were checked above; logs and audit rows here.
        const logs = yield* LogCapture
        const audit = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`
        const revisions = yield* sql<{ row: string }>`SELECT snapshot::text AS row FROM agent_revisions`
        for (const haystack of [...logs.entries.map((e) => JSON.stringify(e)), ...audit.map((a) => a.row), ...revisions.map((r) => r.row)]) {
          expect(haystack.includes(GOOD_KEY) || haystack.includes(BAD_KEY)).toBe(false)
        }
      }), 20 * 60_000)
  })
})
