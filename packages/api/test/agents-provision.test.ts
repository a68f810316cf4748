/**
 * Agent provisioning (SPEC 2.13, 3, 4.4; DESIGN §7) over the real API and the real worker
 * engine: admission with every rule, idempotency by requestId, Presets with variables, phases to
 * `succeeded`, initiator-only use before the Agent exists, a failure at transport and its retry.
 * A crash between phases is tested on the reconciler itself (packages/worker/test/agent-provision.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import { NamespaceId, RequestId, RoleId, SecretId } from "@svc/core/schema"
import { WorkerLive } from "@svc/worker"
import { Duration, Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import * as Compute from "@svc/core/drivers/compute"
import { apiTestLayer, expectData, expectError, type Headers, seedAdmin, seedNamespace, send, TIMESTAMP, until, withKey } from "./support/iamServer.js"

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-api-provision-"))

const withWorker = WorkerLive({ pollInterval: Duration.millis(100) }).pipe(
  Layer.provide(Compute.layerFromConfiguration),
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provide(Layer.succeed(ProcessConfiguration, { dataDir } as LoadedProcessConfig)),
  Layer.provideMerge(apiTestLayer())
)

const WORK_ID = /^wrk_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

interface Fixture {
  readonly baseUrl: string
  readonly admin: { readonly headers: Headers; readonly principalId: string }
  readonly ns: string
  readonly secretId: string
}

const fixture = (label: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`provision-${label}@example.com`)
    const ns = yield* seedNamespace(`provision-${label}`)
    const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "model-key", value: "sk-value" }), 201)
    return { baseUrl, admin, ns, secretId: secret.id } satisfies Fixture
  })

const call = (f: Fixture, method: string, suffix: string, body?: unknown, headers: Headers = f.admin.headers) =>
  send(f.baseUrl, method, suffix.startsWith("/") ? suffix : `/namespaces/${f.ns}/${suffix}`, headers, body)

const secretSource = (f: Fixture) => ({ kind: "secret", namespaceId: f.ns, id: f.secretId })

const inlineBody = (f: Fixture, name: string) => ({
  requestId: RequestId.make(),
  name,
  configuration: { kind: "agent", values: { agents: { defaults: { model: "m" } } }, secretBindings: { TOOL_TOKEN: { source: secretSource(f) } } },
  harnessAuth: { method: "api_key", source: secretSource(f) },
  initialWorkspaceFiles: { "AGENTS.md": "# hello" }
})

const settled = (f: Fixture, workId: string) =>
  until(call(f, "GET", `agents/provision/${workId}`), (r) => ["succeeded", "failed"].includes(r.body?.data?.status))

const counts = (ns: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ records: number; agents: number; configurations: number }>`
      SELECT (SELECT count(*)::int FROM agent_provisioning WHERE namespace_id = ${ns}) AS records,
        (SELECT count(*)::int FROM agents WHERE namespace_id = ${ns}) AS agents,
        (SELECT count(*)::int FROM configurations WHERE namespace_id = ${ns}) AS configurations
    `.pipe(Effect.map((rows) => rows[0]!)))

/** A principal of the Namespace holding exactly these permissions there. */
const keyWith = (ns: string, permissions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const role = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, ${`r-${role}`}, ${`{${permissions.join(",")}}`}::text[])`
    const principalId = yield* createServicePrincipal(`p-${role}`, ns)
    yield* bindRole(principalId, role, { kind: "namespace", id: ns })
    return { principalId, headers: withKey((yield* insertServiceKey(principalId, { namespaceId: ns })).key) }
  })

describe("Agent provisioning with the worker", () => {
  it.layer(withWorker, { timeout: 120_000 })((it) => {
    it.effect("inline: 202 queued/admitted → succeeded/handoff; the Agent (stopped) and Configuration exist and read back; audited", () =>
      Effect.gen(function* () {
        const f = yield* fixture("happy")
        const body = inlineBody(f, "Support bot")
        const admitted = expectData(yield* call(f, "POST", "agents/provision", body), 202).provisioning
        expect(admitted).toEqual({
          id: expect.stringMatching(WORK_ID),
          workId: admitted.id,
          requestId: body.requestId,
          namespaceId: f.ns,
          status: "queued",
          phase: "admitted",
          attemptCount: 0,
          lastAttempt: null,
          nextAttemptAt: expect.stringMatching(TIMESTAMP),
          url: `/namespaces/${f.ns}/agents/provision/${admitted.id}`,
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP)
        })
        const done = expectData(yield* settled(f, admitted.id), 200)
        expect(done).toMatchObject({ status: "succeeded", phase: "handoff", attemptCount: 1, nextAttemptAt: null })
        // SPEC 2.13 `error?`: absent unless the work failed (not null).
        expect(Object.hasOwn(done, "error")).toBe(false)
        expect(done.lastAttempt).toEqual({ at: expect.stringMatching(TIMESTAMP), code: "SUCCEEDED", message: expect.any(String) })
        // The status turned `succeeded` when the attempt's outcome was recorded: updatedAt is that late.
        expect(Date.parse(done.updatedAt)).toBeGreaterThanOrEqual(Date.parse(done.lastAttempt.at))
        const agent = expectData(yield* call(f, "GET", `agents/${done.agentId}`), 200)
        expect(agent).toMatchObject({
          id: done.agentId,
          name: "Support bot",
          configurationId: done.configurationId,
          executionMode: "embedded",
          backendId: null,
          harnessAuth: body.harnessAuth,
          status: "active",
          desiredRuntimeState: "stopped"
        })
        expect(agent.activeRevisionId).toBeUndefined()
        const configuration = expectData(yield* call(f, "GET", `configurations/${done.configurationId}`), 200)
        expect(configuration).toMatchObject({ kind: "agent", generation: 1, values: body.configuration.values, secretBindings: body.configuration.secretBindings })
        const sql = yield* SqlClient.SqlClient
        const principal = yield* sql<{ kind: string }>`SELECT kind FROM principals WHERE id = ${agent.servicePrincipalId}`
        expect(principal).toEqual([{ kind: "agent" }])
        const files = yield* sql<{ files: unknown }>`SELECT files FROM agent_initial_files WHERE agent_id = ${done.agentId}`
        expect(files).toEqual([{ files: { "AGENTS.md": "# hello" } }])
        const record = yield* sql<{ request: unknown; body_digest: string; initiator_principal_id: string }>`
          SELECT request, body_digest, initiator_principal_id FROM agent_provisioning WHERE id = ${admitted.id}
        `
        expect(record).toEqual([{ request: null, body_digest: expect.stringMatching(/^[0-9a-f]{64}$/), initiator_principal_id: f.admin.principalId }])
        const audit = yield* sql<{ kind: string; resource_id: string; actor_principal_id: string }>`
          SELECT kind, resource_id, actor_principal_id FROM audit_events WHERE namespace_id = ${f.ns} AND outcome = 'success' AND kind <> 'secret.created' ORDER BY id
        `
        expect(audit).toEqual([
          { kind: "agent.provisioning-admitted", resource_id: admitted.id, actor_principal_id: f.admin.principalId },
          { kind: "configuration.created", resource_id: done.configurationId, actor_principal_id: f.admin.principalId },
          { kind: "agent.created", resource_id: done.agentId, actor_principal_id: f.admin.principalId },
          { kind: "agent.provisioned", resource_id: admitted.id, actor_principal_id: f.admin.principalId }
        ])
      }))

    it.effect("idempotent per requestId: the same body answers the same item; another body or another caller is 409", () =>
      Effect.gen(function* () {
        const f = yield* fixture("idempotent")
        const body = inlineBody(f, "Once")
        const first = expectData(yield* call(f, "POST", "agents/provision", body), 202).provisioning
        // The same body, its keys in another order.
        const reordered = Object.fromEntries(Object.entries(body).reverse())
        const again = expectData(yield* call(f, "POST", "agents/provision", reordered), 202).provisioning
        expect(again.id).toBe(first.id)
        expectError(yield* call(f, "POST", "agents/provision", { ...body, name: "Twice" }), 409, "RESOURCE_CONFLICT")
        const other = yield* seedAdmin("provision-idempotent-other@example.com")
        expectError(yield* call(f, "POST", "agents/provision", body, other.headers), 409, "RESOURCE_CONFLICT")
        yield* settled(f, first.id)
        expect(expectData(yield* call(f, "POST", "agents/provision", body), 202).provisioning).toMatchObject({ id: first.id, status: "succeeded" })
        expect(yield* counts(f.ns)).toEqual({ records: 1, agents: 1, configurations: 1 })
        const sql = yield* SqlClient.SqlClient
        const items = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM work_items WHERE kind = 'agent.provision' AND key = ${first.id}`
        expect(items[0]!.n).toBe(1)
      }))

    it.effect("from a Preset: variables rendered, body fields win whole; render and shape errors are 400 with details", () =>
      Effect.gen(function* () {
        const f = yield* fixture("preset")
        const template = {
          variables: { model: { type: "string" }, token: { type: "password" }, mode: { type: "string", default: "embedded" } },
          agent: {
            executionMode: "{{ vars.mode }}",
            harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: f.ns, id: f.secretId } },
            pluginApprovers: [{ channel: "chat", id: "U1" }],
            initialWorkspaceFiles: { "SOUL.md": "model {{ vars.model }}" }
          },
          configuration: { values: { model: "{{ vars.model }}" } }
        }
        // A password placed where it would be readable (a Namespace viewer reads values) is refused.
        expectError(
          yield* call(f, "POST", "presets", { name: "leaky", template: { ...template, configuration: { values: { model: "{{ vars.model }}", token: "{{vars.token}}" } } } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/template/configuration/values/token" }]
        )
        const preset = expectData(yield* call(f, "POST", "presets", { name: "base", template }), 201)
        const body = {
          requestId: RequestId.make(),
          name: "From preset",
          presetId: preset.id,
          variables: { model: "gpt-x", token: "pw-1" },
          pluginApprovers: [{ channel: "chat", id: "U2" }]
        }
        const admitted = expectData(yield* call(f, "POST", "agents/provision", body), 202).provisioning
        const done = expectData(yield* settled(f, admitted.id), 200)
        expect(done.status).toBe("succeeded")
        const agent = expectData(yield* call(f, "GET", `agents/${done.agentId}`), 200)
        expect(agent).toMatchObject({ name: "From preset", executionMode: "embedded", harnessAuth: template.agent.harnessAuth, pluginApprovers: [{ channel: "chat", id: "U2" }] })
        const configuration = expectData(yield* call(f, "GET", `configurations/${done.configurationId}`), 200)
        expect(configuration.values).toEqual({ model: "gpt-x" })
        const sql = yield* SqlClient.SqlClient
        const files = yield* sql<{ files: unknown }>`SELECT files FROM agent_initial_files WHERE agent_id = ${done.agentId}`
        expect(files).toEqual([{ files: { "SOUL.md": "model gpt-x" } }])
        // The password never reaches the audit trail.
        const audit = yield* sql<{ details: unknown }>`SELECT details FROM audit_events WHERE namespace_id = ${f.ns}`
        expect(JSON.stringify(audit)).not.toContain("pw-1")

        const before = yield* counts(f.ns)
        const fresh = (extra: Record<string, unknown>) => ({ requestId: RequestId.make(), name: "Bad", presetId: preset.id, variables: { model: "m", token: "t" }, ...extra })
        expectError(yield* call(f, "POST", "agents/provision", fresh({ variables: { token: 1, extra: true } })), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/variables/extra" },
          { code: "REQUIRED", path: "/variables/model" },
          { code: "INVALID_TYPE", path: "/variables/token" }
        ])
        expectError(yield* call(f, "POST", "agents/provision", fresh({ variables: { model: "m", token: "t", mode: "sideways" } })), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/agent/executionMode" }
        ])
        expectError(
          yield* call(f, "POST", "agents/provision", fresh({ configuration: { kind: "agent", values: {} } })),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/presetId" }]
        )
        const { presetId: _p, variables: _v, ...withoutSource } = fresh({})
        expectError(yield* call(f, "POST", "agents/provision", withoutSource), 400, "INVALID_REQUEST", [{ code: "REQUIRED", path: "/configuration" }])
        expectError(yield* call(f, "POST", "agents/provision", { ...inlineBody(f, "V"), variables: {} }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/variables" }
        ])
        // A Preset stored before password placements were refused is refused when applied.
                const legacy = expectData(yield* call(f, "POST", "presets", { name: "legacy", template }), 201)
        const leaky = { ...template, configuration: { values: { model: "{{ vars.model }}", token: "{{vars.token}}" } } }
        yield* sql`UPDATE presets SET template = ${JSON.stringify(leaky)}::jsonb WHERE id = ${legacy.id}`
        expectError(yield* call(f, "POST", "agents/provision", fresh({ presetId: legacy.id })), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/configuration/values/token" }
        ])
        // A Preset that is not there (or not readable) is 404.
        expectError(yield* call(f, "POST", "agents/provision", fresh({ presetId: "pre_00000000-0000-4000-8000-000000000000" })), 404, "NOT_FOUND")
        expect(yield* counts(f.ns)).toEqual(before)
      }))

    it.effect("admission refuses what Agent create refuses, with the same status, and records nothing", () =>
      Effect.gen(function* () {
        const f = yield* fixture("refusals")
        const taken = expectData(yield* call(f, "POST", "agents/provision", inlineBody(f, "Taken")), 202).provisioning
        yield* settled(f, taken.id)
        const before = yield* counts(f.ns)
        const post = (extra: Record<string, unknown>) => call(f, "POST", "agents/provision", { ...inlineBody(f, "Refused"), ...extra })
        expectError(yield* post({ name: "Taken" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* post({ backendId: "nowhere" }), 404, "NOT_FOUND")
        expectError(yield* post({ harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: f.ns, id: SecretId.make() } } }), 404, "NOT_FOUND")
        expectError(yield* post({ configuration: { kind: "agent", values: {}, secretBindings: { KEY: { source: { kind: "secret", namespaceId: NamespaceId.make(), id: f.secretId } } } } }), 404, "NOT_FOUND")
        expectError(yield* post({ executionMode: "dedicated" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* post({ harnessAuth: { method: "provider_service_account", serviceAccountId: "sa_00000000-0000-4000-8000-000000000000" } }), 409, "RESOURCE_CONFLICT")
        expectError(yield* post({ workspaceDefaultsId: "0".repeat(64) }), 409, "RESOURCE_CONFLICT")
        expectError(yield* post({ plugins: { "acme:search": { enabled: true } } }), 501, "NOT_IMPLEMENTED")
        expectError(yield* post({ configuration: { kind: "agent", values: {}, secretBindings: { PATH: { source: secretSource(f) } } } }), 400, "INVALID_REQUEST")
        expectError(yield* post({ servicePrincipalId: "sp_x" }), 400, "INVALID_REQUEST", [{ code: "UNKNOWN_FIELD", path: "/servicePrincipalId" }])
        expectError(yield* post({ configurationId: "cfg_00000000-0000-4000-8000-000000000000" }), 400, "INVALID_REQUEST", [{ code: "UNKNOWN_FIELD", path: "/configurationId" }])
        expectError(yield* post({ requestId: "req_not-a-uuid" }), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/requestId" }])
        expectError(yield* post({ repositoryAccess: { defaultProfile: "git-read", repositories: [] }, repositoryBindings: [] }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/repositoryAccess" }
        ])
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE namespaces SET status = 'failed' WHERE id = ${f.ns}`
        expectError(yield* post({}), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE namespaces SET status = 'ready' WHERE id = ${f.ns}`
        expect(yield* counts(f.ns)).toEqual(before)
      }))

    it.effect("permissions: both creates in the Namespace and operate on every Secret", () =>
      Effect.gen(function* () {
        const f = yield* fixture("permissions")
        const body = (name: string) => ({ requestId: RequestId.make(), name, configuration: { kind: "agent", values: {} } })
        const agentOnly = yield* keyWith(f.ns, ["agent:create", "namespace:read"])
        expectError(yield* call(f, "POST", "agents/provision", body("a"), agentOnly.headers), 403, "FORBIDDEN")
        const blind = yield* keyWith(f.ns, ["agent:create"])
        expectError(yield* call(f, "POST", "agents/provision", body("b"), blind.headers), 404, "NOT_FOUND")
        const creator = yield* keyWith(f.ns, ["agent:create", "configuration:create", "namespace:read", "secret:read", "provisioning:read"])
        expectError(yield* call(f, "POST", "agents/provision", { ...body("c"), harnessAuth: { method: "api_key", source: secretSource(f) } }, creator.headers), 403, "FORBIDDEN")
        expectError(
          yield* call(f, "POST", "agents/provision", { ...body("d"), configuration: { kind: "agent", values: {}, secretBindings: { K: { source: secretSource(f) } } } }, creator.headers),
          403,
          "FORBIDDEN"
        )
        expect((yield* counts(f.ns)).records).toBe(0)
        const admitted = expectData(yield* call(f, "POST", "agents/provision", body("e"), creator.headers), 202).provisioning
        expect(expectData(yield* settled({ ...f, admin: { ...f.admin, headers: creator.headers } }, admitted.id), 200).status).toBe("succeeded")
        // Once the Agent exists, anyone with provisioning:read reads the record; without it, 404.
        expect(expectData(yield* call(f, "GET", `agents/provision/${admitted.id}`), 200).agentId).toBeDefined()
        const viewer = yield* keyWith(f.ns, ["namespace:read"])
        expectError(yield* call(f, "GET", `agents/provision/${admitted.id}`, undefined, viewer.headers), 404, "NOT_FOUND")
        const reader = yield* keyWith(f.ns, ["provisioning:read"])
        expectError(yield* call(f, "POST", `agents/provision/${admitted.id}/retry`, undefined, reader.headers), 403, "FORBIDDEN")
      }))

    it.effect("before the Agent exists only the initiator may read or retry the record; afterwards anyone with provisioning:read", () =>
      Effect.gen(function* () {
        const f = yield* fixture("initiator")
        const other = yield* seedAdmin("provision-initiator-other@example.com")
        const sql = yield* SqlClient.SqlClient
        // Agent inserts wait while the table is held, so the record stays without an Agent.
        const admitted = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`LOCK TABLE agents IN SHARE MODE`
            const item = expectData(yield* call(f, "POST", "agents/provision", inlineBody(f, "Mine")), 202).provisioning
            const mine = expectData(yield* call(f, "GET", `agents/provision/${item.id}`), 200)
            expect(mine.agentId).toBeUndefined()
            expectError(yield* call(f, "GET", `agents/provision/${item.id}`, undefined, other.headers), 404, "NOT_FOUND")
            expectError(yield* call(f, "POST", `agents/provision/${item.id}/retry`, undefined, other.headers), 404, "NOT_FOUND")
            // Not failed: the initiator's retry is a conflict.
            expectError(yield* call(f, "POST", `agents/provision/${item.id}/retry`), 409, "RESOURCE_CONFLICT")
            return item
          })
        )
        yield* settled(f, admitted.id)
        expect(expectData(yield* call(f, "GET", `agents/provision/${admitted.id}`, undefined, other.headers), 200)).toMatchObject({
          status: "succeeded",
          agentId: expect.any(String)
        })
        expectError(yield* call(f, "GET", `agents/provision/wrk_00000000-0000-4000-8000-000000000000`), 404, "NOT_FOUND")
        // SPEC 4's {workId} shape: another id of it names nothing here (404); outside it, 400.
        expectError(yield* call(f, "GET", `agents/provision/not-a-work-id`), 404, "NOT_FOUND")
        expectError(yield* call(f, "GET", `agents/provision/not+a+work+id`), 400, "INVALID_REQUEST")
      }))

    it.effect("a name taken between admission and transport fails permanently at transport; retry resumes there", () =>
      Effect.gen(function* () {
        const f = yield* fixture("retry")
        const sql = yield* SqlClient.SqlClient
        // Hold back every Agent insert (SHARE blocks writers, not readers) while both are admitted.
        const [first, second] = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`LOCK TABLE agents IN SHARE MODE`
            const one = expectData(yield* call(f, "POST", "agents/provision", inlineBody(f, "Twin")), 202).provisioning
            const two = expectData(yield* call(f, "POST", "agents/provision", inlineBody(f, "Twin")), 202).provisioning
            return [one, two] as const
          })
        )
        const results = [expectData(yield* settled(f, first.id), 200), expectData(yield* settled(f, second.id), 200)]
        const failed = results.find((r) => r.status === "failed")!
        expect(results.map((r) => r.status).sort()).toEqual(["failed", "succeeded"])
        expect(failed).toMatchObject({
          status: "failed",
          phase: "transport",
          configurationId: expect.any(String),
          error: { code: "RESOURCE_CONFLICT", message: "An Agent with this name already exists in the Namespace." },
          nextAttemptAt: null
        })
        expect(failed.agentId).toBeUndefined()
        expect(Date.parse(failed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(failed.lastAttempt.at))
        expectError(yield* call(f, "POST", `agents/provision/${results.find((r) => r.status === "succeeded")!.id}/retry`), 409, "RESOURCE_CONFLICT")
        // The name is freed; the retry creates the Agent on the Configuration created before.
        yield* sql`UPDATE agents SET name = 'Twin (old)' WHERE namespace_id = ${f.ns} AND name = 'Twin'`
        const retried = expectData(yield* call(f, "POST", `agents/provision/${failed.id}/retry`), 202)
        expect(retried).toMatchObject({ id: failed.id, phase: "transport" })
        expect(Object.hasOwn(retried, "error")).toBe(false)
        expect(["queued", "running", "succeeded"]).toContain(retried.status)
        const done = expectData(yield* until(call(f, "GET", `agents/provision/${failed.id}`), (r) => r.body?.data?.status === "succeeded"), 200)
        expect(done).toMatchObject({ phase: "handoff", configurationId: failed.configurationId, attemptCount: 2 })
        expect(yield* counts(f.ns)).toEqual({ records: 2, agents: 2, configurations: 2 })
        const audit = yield* sql<{ kind: string }>`SELECT kind FROM audit_events WHERE resource_id = ${failed.id} ORDER BY id`
        expect(audit.map((a) => a.kind)).toEqual(["agent.provisioning-admitted", "agent.provisioning-retried", "agent.provisioned"])
      }))
  })
})
