/**
 * Agents over the real API and database (SPEC 2.4-2.7, 3, 4.4, 7.3): create, list, read,
 * update and delete with every admission rule, the Agent's own service principal, saved
 * settings that no longer decode, references that block deletes, and deploy / stop admission
 * with the revision snapshot and the persisted deployment status. The worker side (a real
 * gateway) is tested in the worker package.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig, type InstallationConfig } from "@svc/core/config"
import { BuiltinRoles } from "@svc/core/iam"
import { AgentId, ConfigurationId, NamespaceId, RevisionId, RoleId, SecretId, ServiceAccountId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  apiTestLayer,
  expectData,
  expectError,
  type Headers,
  seedAdmin,
  seedNamespace,
  send,
  TIMESTAMP,
  withKey
} from "./support/iamServer.js"
import { workspaceDefaultsIdOf } from "../src/agents/workspaceDefaults.js"

const AGENT_ID = /^agt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const REVISION_ID = /^rev_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const installation: InstallationConfig = {
  ...defaultInstallationConfig,
  backends: [
    {
      id: "model-accounts",
      type: "model_accounts",
      configuration: { workspaceId: "2b7e1c0a-4f3e-4c1a-9d2b-7e6f5a4b3c2d", apiKeyPath: "/etc/svc/model-admin-key", credentialTtlSeconds: 2592000 },
      drivers: { serviceAccount: "model-accounts" }
    },
    { id: "code-host", type: "code_host", configuration: { registryPath: "/etc/svc/registry.json" }, drivers: { repo: "code-host" } }
  ]
}

interface Fixture {
  readonly baseUrl: string
  readonly admin: { readonly headers: Headers; readonly principalId: string }
  readonly ns: string
  readonly configurationId: string
  readonly secretId: string
}

const fixture = (label: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`agents-${label}@example.com`)
    const ns = yield* seedNamespace(`agents-${label}`)
    const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: { agents: {} } }), 201)
    const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "model-key", value: "sk-model-key-value" }), 201)
    return { baseUrl, admin, ns, configurationId: configuration.id, secretId: secret.id } satisfies Fixture
  })

const apiKey = (f: Fixture) => ({ method: "api_key", source: { kind: "secret", namespaceId: f.ns, id: f.secretId } })

const call = (f: Fixture, method: string, path: string, body?: unknown, headers: Headers = f.admin.headers) =>
  send(f.baseUrl, method, path.startsWith("/") ? path : `/namespaces/${f.ns}/${path}`, headers, body)

/** Grants the Agent's principal `secret:operate` on one Secret, as an operator would. */
const grantSecretToAgent = (f: Fixture, principalId: string, secretId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const role = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${f.ns}, ${`operate-${role}`}, ARRAY['secret:operate'])`
    yield* bindRole(principalId, role, { kind: "secret", id: secretId, namespaceId: f.ns })
  })

describe("Agents", () => {
  it.layer(apiTestLayer(installation), { timeout: 120_000 })((it) => {
    it.effect("create → 201 with its own opaque service principal; read, list; the principal cannot get a key", () =>
      Effect.gen(function* () {
        const f = yield* fixture("create")
        const created = expectData(yield* call(f, "POST", "agents", { name: "Support bot", configurationId: f.configurationId, harnessAuth: apiKey(f) }), 201)
        expect(created).toEqual({
          id: expect.stringMatching(AGENT_ID),
          namespaceId: f.ns,
          name: "Support bot",
          configurationId: f.configurationId,
          executionMode: "embedded",
          backendId: null,
          harnessAuth: apiKey(f),
          servicePrincipalId: expect.any(String),
          status: "active",
          desiredRuntimeState: "stopped",
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP)
        })
        expect(created.servicePrincipalId).not.toContain(created.id.slice(4))
        const sql = yield* SqlClient.SqlClient
        const principal = yield* sql<{ kind: string; namespace_id: string }>`SELECT kind, namespace_id FROM principals WHERE id = ${created.servicePrincipalId}`
        expect(principal).toEqual([{ kind: "agent", namespace_id: f.ns }])
        expect(expectData(yield* call(f, "GET", `agents/${created.id}`), 200)).toEqual(created)
        expect(expectData(yield* call(f, "GET", "agents"), 200)).toEqual([created])
        // SPEC 4.4 rule 7 / 5.5: the Agent principal cannot authenticate to the controller API.
        expectError(yield* call(f, "POST", "/api/auth/service-keys", { servicePrincipalId: created.servicePrincipalId, name: "agent", namespaceId: f.ns }), 400, "INVALID_REQUEST")
        // Create queues no work.
        const work = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM work_items WHERE payload->>'agentId' = ${created.id}`
        expect(work[0]!.n).toBe(0)
        const audit = yield* sql<{ kind: string }>`SELECT kind FROM audit_events WHERE resource_id = ${created.id}`
        expect(audit.map((a) => a.kind)).toEqual(["agent.created"])
      }))

    it.effect("create refuses what SPEC 7.3 lists, each with its status, and writes nothing", () =>
      Effect.gen(function* () {
        const f = yield* fixture("refusals")
        const other = yield* seedNamespace("agents-refusals-other")
        const otherConfiguration = expectData(yield* call(f, "POST", `/namespaces/${other}/configurations`, { kind: "agent", values: {} }), 201)
        const sql = yield* SqlClient.SqlClient
        const count = sql<{ agents: number; principals: number }>`
          SELECT (SELECT count(*)::int FROM agents) AS agents, (SELECT count(*)::int FROM principals WHERE kind = 'agent') AS principals
        `
        const before = yield* count
        const create = (body: Record<string, unknown>) => call(f, "POST", "agents", { name: "bot", configurationId: f.configurationId, ...body })
        expectError(yield* create({ configurationId: ConfigurationId.make() }), 404, "NOT_FOUND")
        expectError(yield* create({ configurationId: otherConfiguration.id }), 404, "NOT_FOUND")
        expectError(yield* create({ backendId: "no-such-backend" }), 404, "NOT_FOUND")
        expectError(yield* create({ backendId: "code-host" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* create({ executionMode: "dedicated" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* create({ harnessAuth: { method: "direct_token", source: apiKey(f).source } }), 409, "RESOURCE_CONFLICT")
        expectError(yield* create({ harnessAuth: { method: "provider_service_account", serviceAccountId: ServiceAccountId.make() } }), 409, "RESOURCE_CONFLICT")
        expectError(yield* create({ harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: f.ns, id: SecretId.make() } } }), 404, "NOT_FOUND")
        expectError(yield* create({ harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: other, id: f.secretId } } }), 404, "NOT_FOUND")
        expectError(yield* create({ plugins: { "registry:search": { enabled: true } } }), 501, "NOT_IMPLEMENTED")
        expectError(yield* create({ workspaceDefaultsId: "0".repeat(64) }), 409, "RESOURCE_CONFLICT")
        expectError(yield* call(f, "POST", `/namespaces/${NamespaceId.make()}/agents`, { name: "bot", configurationId: f.configurationId }), 404, "NOT_FOUND")
        expect(yield* count).toEqual(before)

        // The current defaults identity is accepted; `runtime` harness auth runs on host compute.
        const fine = expectData(yield* create({ name: "fine", workspaceDefaultsId: workspaceDefaultsIdOf({}), harnessAuth: { method: "runtime" }, plugins: {} }), 201)
        expect(fine.harnessAuth).toEqual({ method: "runtime" })
        expect(fine.workspaceDefaultsId).toBe(workspaceDefaultsIdOf({}))
        const withBackend = expectData(yield* create({ name: "with-backend", backendId: "model-accounts" }), 201)
        expect(withBackend.backendId).toBe("model-accounts")
        // Repository settings need a Repo Driver (agents-repositories.test.ts has one); an empty list is fine.
        expectError(yield* create({ name: "with-repos", repositoryBindings: [{ repositoryRef: "svc-api" }] }), 409, "RESOURCE_CONFLICT")
        expect(expectData(yield* create({ name: "no-repos", repositoryBindings: [] }), 201).repositoryBindings).toBeUndefined()
        // Names are unique within the Namespace, free in another.
        expectError(yield* create({ name: "fine" }), 409, "RESOURCE_CONFLICT")
        expectData(yield* call(f, "POST", `/namespaces/${other}/agents`, { name: "fine", configurationId: otherConfiguration.id }), 201)

        // Namespace states: failed and deleting accept no new Agents; provisioning does.
        yield* sql`UPDATE namespaces SET status = 'failed' WHERE id = ${other}`
        expectError(yield* call(f, "POST", `/namespaces/${other}/agents`, { name: "late", configurationId: otherConfiguration.id }), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${other}`
        expectError(yield* call(f, "POST", `/namespaces/${other}/agents`, { name: "late", configurationId: otherConfiguration.id }), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE namespaces SET status = 'provisioning' WHERE id = ${other}`
        expectData(yield* call(f, "POST", `/namespaces/${other}/agents`, { name: "early", configurationId: otherConfiguration.id }), 201)
      }))

    it.effect("SPEC 4.4 rule 4: create bodies up to 448 KiB with JSON escaping; a larger one is 413 and creates nothing", () =>
      Effect.gen(function* () {
        const f = yield* fixture("body-limit")
        // Four maximal initial files of a character JSON escapes in 6 bytes: 384 KiB of escapes.
        const escaped = "\u0001".repeat(16_384)
        const files = { "AGENTS.md": escaped, "SOUL.md": escaped, "IDENTITY.md": escaped, "USER.md": escaped }
        const body = { name: "big", configurationId: f.configurationId, initialWorkspaceFiles: files }
        expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(384 * 1024)
        expect(expectData(yield* call(f, "POST", "agents", body), 201).name).toBe("big")
        const oversized = { ...body, name: "too-large", padding: "y".repeat(64 * 1024) }
        expect(Buffer.byteLength(JSON.stringify(oversized))).toBeGreaterThan(448 * 1024)
        expectError(yield* call(f, "POST", "agents", oversized), 413, "PAYLOAD_TOO_LARGE")
        expect(expectData(yield* call(f, "GET", "agents"), 200).map((a: { name: string }) => a.name)).toEqual(["big"])
      }))

    it.effect("harness Secrets need the caller's operate; Configuration read is exact", () =>
      Effect.gen(function* () {
        const f = yield* fixture("grants")
        const sql = yield* SqlClient.SqlClient
        const principal = yield* createServicePrincipal("agents-grants-editor", f.ns)
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${f.ns}, 'agent-maker', ARRAY['namespace:read', 'agent:create', 'agent:read', 'configuration:read', 'secret:read'])`
        yield* bindRole(principal, role, { kind: "namespace", id: f.ns })
        const headers = withKey((yield* insertServiceKey(principal, { namespaceId: f.ns })).key)
        expectError(yield* call(f, "POST", "agents", { name: "bot", configurationId: f.configurationId, harnessAuth: apiKey(f) }, headers), 403, "FORBIDDEN")
        expectData(yield* call(f, "POST", "agents", { name: "bot", configurationId: f.configurationId }, headers), 201)
        const blind = yield* createServicePrincipal("agents-grants-blind", f.ns)
        const blindRole = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${blindRole}, ${f.ns}, 'agent-only', ARRAY['namespace:read', 'agent:create'])`
        yield* bindRole(blind, blindRole, { kind: "namespace", id: f.ns })
        const blindHeaders = withKey((yield* insertServiceKey(blind, { namespaceId: f.ns })).key)
        expectError(yield* call(f, "POST", "agents", { name: "bot2", configurationId: f.configurationId }, blindHeaders), 404, "NOT_FOUND")
      }))

    it.effect("PATCH: omission preserves, null clears; refs follow the draft; delete is 202 and blocks updates", () =>
      Effect.gen(function* () {
        const f = yield* fixture("patch")
        const created = expectData(yield* call(f, "POST", "agents", {
          name: "bot",
          configurationId: f.configurationId,
          backendId: "model-accounts",
          harnessAuth: apiKey(f),
          pluginApprovers: [{ channel: "chat", id: "team:T1:user:U1" }]
        }), 201)
        const path = `agents/${created.id}`
        // The Secret and the Configuration are in use.
        expectError(yield* call(f, "DELETE", `secrets/${f.secretId}`), 409, "RESOURCE_CONFLICT")
        expectError(yield* call(f, "DELETE", `configurations/${f.configurationId}`), 409, "RESOURCE_CONFLICT")
        expectError(yield* call(f, "DELETE", `/namespaces/${f.ns}`), 409, "NAMESPACE_NOT_EMPTY")

        const kept = expectData(yield* call(f, "PATCH", path, { configurationId: f.configurationId }), 200)
        expect(kept).toEqual({ ...created, updatedAt: expect.stringMatching(TIMESTAMP) })
        const cleared = expectData(yield* call(f, "PATCH", path, { configurationId: f.configurationId, backendId: null, harnessAuth: null, pluginApprovers: null }), 200)
        expect(cleared).toEqual({ ...created, backendId: null, harnessAuth: null, pluginApprovers: null, updatedAt: expect.stringMatching(TIMESTAMP) })
        // The harness Secret is no longer pinned by the draft.
        expect((yield* call(f, "DELETE", `secrets/${f.secretId}`)).status).toBe(204)
        expectError(yield* call(f, "PATCH", path, { configurationId: ConfigurationId.make() }), 404, "NOT_FOUND")
        expectError(yield* call(f, "PATCH", path, { configurationId: f.configurationId, executionMode: "dedicated" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* call(f, "PATCH", `agents/${AgentId.make()}`, { configurationId: f.configurationId }), 404, "NOT_FOUND")

        const deleting = expectData(yield* call(f, "DELETE", path), 202)
        expect(deleting).toEqual({ ...cleared, status: "deleting", desiredRuntimeState: "stopped", updatedAt: expect.stringMatching(TIMESTAMP) })
        // Reads stay available; mutations are refused.
        expect(expectData(yield* call(f, "GET", path), 200).status).toBe("deleting")
        expectError(yield* call(f, "PATCH", path, { configurationId: f.configurationId }), 409, "AGENT_DELETING")
        expectError(yield* call(f, "POST", `${path}/deploy`), 409, "AGENT_DELETING")
        expectError(yield* call(f, "POST", `${path}/stop`), 409, "AGENT_DELETING")
        // A repeat changes nothing visible and keeps one pending teardown.
        expect(expectData(yield* call(f, "DELETE", path), 202).status).toBe("deleting")
        const sql = yield* SqlClient.SqlClient
        const teardowns = yield* sql<{ state: string }>`SELECT state FROM work_items WHERE kind = 'agent.teardown' AND key = ${created.id}`
        expect(teardowns).toEqual([{ state: "queued" }])
        // A deleting Agent still counts for NAMESPACE_NOT_EMPTY.
        expectError(yield* call(f, "DELETE", `/namespaces/${f.ns}`), 409, "NAMESPACE_NOT_EMPTY")
        const audit = yield* sql<{ kind: string }>`SELECT kind FROM audit_events WHERE resource_id = ${created.id} AND outcome = 'success' ORDER BY id`
        expect(audit.map((a) => a.kind)).toEqual(["agent.created", "agent.updated", "agent.updated", "agent.deleted", "agent.deletion-retried"])
      }))

    it.effect("saved settings that no longer decode: readable metadata plus configurationReadError", () =>
      Effect.gen(function* () {
        const f = yield* fixture("unreadable")
        const created = expectData(yield* call(f, "POST", "agents", { name: "bot", configurationId: f.configurationId, harnessAuth: apiKey(f) }), 201)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE agents SET settings = jsonb_set(settings, '{harnessAuth}', '{"method": "retired-method"}') WHERE id = ${created.id}`
        const read = expectData(yield* call(f, "GET", `agents/${created.id}`), 200)
        const { harnessAuth: _omitted, ...metadata } = created
        expect(read).toEqual({ ...metadata, configurationReadError: { code: "SAVED_CONFIGURATION_UNREADABLE", field: "harnessAuth" } })
        expect(expectData(yield* call(f, "GET", "agents"), 200)).toEqual([read])
        yield* sql`UPDATE namespaces SET status = 'ready' WHERE id = ${f.ns}`
        expectError(yield* call(f, "POST", `agents/${created.id}/deploy`), 409, "RESOURCE_CONFLICT")
        // Updating the field repairs it.
        const repaired = expectData(yield* call(f, "PATCH", `agents/${created.id}`, { configurationId: f.configurationId, harnessAuth: apiKey(f) }), 200)
        expect(repaired.configurationReadError).toBeUndefined()
        expect(repaired.harnessAuth).toEqual(apiKey(f))
      }))

    it.effect("deploy: admission rules, the revision snapshot, the persisted deployment status; stop", () =>
      Effect.gen(function* () {
        const f = yield* fixture("deploy")
        const sql = yield* SqlClient.SqlClient
        const bound = expectData(yield* call(f, "POST", "secrets", { name: "search-key", value: "search-key-value" }), 201)
        const configuration = expectData(yield* call(f, "POST", "configurations", {
          kind: "agent",
          values: { models: { providers: {} } },
          secretBindings: { SEARCH_KEY: { source: { kind: "secret", namespaceId: f.ns, id: bound.id } } }
        }), 201)
        const agent = expectData(yield* call(f, "POST", "agents", { name: "bot", configurationId: configuration.id }), 201)
        const deploy = `agents/${agent.id}/deploy`
        yield* sql`UPDATE namespaces SET status = 'provisioning' WHERE id = ${f.ns}`
        expectError(yield* call(f, "POST", deploy), 409, "NAMESPACE_NOT_READY")
        yield* sql`UPDATE namespaces SET status = 'ready' WHERE id = ${f.ns}`
        expectError(yield* call(f, "POST", deploy), 409, "RESOURCE_CONFLICT")
        expectData(yield* call(f, "PATCH", `agents/${agent.id}`, { configurationId: configuration.id, harnessAuth: apiKey(f) }), 200)
        // The Agent's principal needs operate on every Secret the revision delivers.
        expectError(yield* call(f, "POST", deploy), 403, "FORBIDDEN")
        yield* grantSecretToAgent(f, agent.servicePrincipalId, f.secretId)
        expectError(yield* call(f, "POST", deploy), 403, "FORBIDDEN")
        yield* grantSecretToAgent(f, agent.servicePrincipalId, bound.id)
        expect(yield* sql`SELECT 1 FROM agent_revisions WHERE agent_id = ${agent.id}`).toHaveLength(0)
        // SPEC 6: each refusal is an audited denial, the caller's, naming the Agent principal.
        const denials = yield* sql<{ actor: string; kind: string; id: string; details: unknown }>`
          SELECT actor_principal_id AS actor, resource_kind AS kind, resource_id AS id, details FROM audit_events
          WHERE kind = 'authorization.denied' AND namespace_id = ${f.ns} ORDER BY audit_events.id`
        const denial = { actor: f.admin.principalId, kind: "secret", details: { permission: "secret:operate", reason: "no-grant", principalId: agent.servicePrincipalId } }
        expect(denials).toEqual([{ ...denial, id: expect.stringMatching(/^sec_/) }, { ...denial, id: bound.id }])

        const revision = expectData(yield* call(f, "POST", deploy), 202)
        expect(revision).toEqual({
          id: expect.stringMatching(REVISION_ID),
          agentId: agent.id,
          namespaceId: f.ns,
          backendId: null,
          compute: { id: "local", implementation: "local" },
          configuration: { models: { providers: {} } },
          configurationGeneration: 1,
          configurationId: configuration.id,
          configurationKind: "agent",
          secretBindings: { SEARCH_KEY: { source: { kind: "secret", namespaceId: f.ns, id: bound.id } } },
          harness: { id: "openclaw", mode: "embedded", auth: apiKey(f) },
          plugins: { driver: { id: "none", implementation: "none" }, plugins: {} },
          pluginApprovers: null,
          repositoryCredentials: [],
          createdAt: expect.stringMatching(TIMESTAMP)
        })
        expect(JSON.stringify(revision)).not.toContain("sk-model-key-value")
        expect(expectData(yield* call(f, "GET", `agents/${agent.id}/revisions/${revision.id}`), 200)).toEqual(revision)
        expect(expectData(yield* call(f, "GET", `agents/${agent.id}/revisions`), 200)).toEqual([revision])
        expect(expectData(yield* call(f, "GET", `agents/${agent.id}`), 200).desiredRuntimeState).toBe("running")
        expect(expectData(yield* call(f, "GET", `agents/${agent.id}/deployments/${revision.id}`), 200)).toEqual({
          deploymentId: revision.id,
          namespaceId: f.ns,
          agentId: agent.id,
          status: "queued",
          error: null,
          progress: { lastAttempt: null, nextAttemptAt: expect.stringMatching(TIMESTAMP) },
          warnings: []
        })
        // Changing the Configuration never alters a revision.
        expectData(yield* call(f, "PATCH", `configurations/${configuration.id}`, { values: { changed: true } }), 200)
        expect(expectData(yield* call(f, "GET", `agents/${agent.id}/revisions/${revision.id}`), 200)).toEqual(revision)
        // The bound Secrets are pinned by the revision.
        expectData(yield* call(f, "PATCH", `configurations/${configuration.id}`, { values: {}, secretBindings: {} }), 200)
        expectError(yield* call(f, "DELETE", `secrets/${bound.id}`), 409, "RESOURCE_CONFLICT")
        // Revisions and deployments are addressed under their own Agent only.
        const otherAgent = expectData(yield* call(f, "POST", "agents", { name: "other", configurationId: configuration.id }), 201)
        expectError(yield* call(f, "GET", `agents/${otherAgent.id}/revisions/${revision.id}`), 404, "NOT_FOUND")
        expectError(yield* call(f, "GET", `agents/${otherAgent.id}/deployments/${revision.id}`), 404, "NOT_FOUND")
        expectError(yield* call(f, "GET", `agents/${agent.id}/deployments/${RevisionId.make()}`), 404, "NOT_FOUND")

        const stopped = expectData(yield* call(f, "POST", `agents/${agent.id}/stop`), 202)
        expect(stopped.desiredRuntimeState).toBe("stopped")
        expect(expectData(yield* call(f, "POST", `agents/${agent.id}/stop`), 202).desiredRuntimeState).toBe("stopped")
        const work = yield* sql<{ kind: string; key: string }>`SELECT kind, key FROM work_items WHERE payload->>'agentId' = ${agent.id} ORDER BY kind`
        expect(work).toEqual([{ kind: "agent.deploy", key: revision.id }, { kind: "agent.stop", key: agent.id }])
      }))

    it.effect("a Namespace viewer reads Agents and revisions but cannot create, change, deploy or stop them", () =>
      Effect.gen(function* () {
        const f = yield* fixture("viewer")
        const agent = expectData(yield* call(f, "POST", "agents", { name: "bot", configurationId: f.configurationId }), 201)
        const viewer = yield* createServicePrincipal("agents-viewer", f.ns)
        yield* bindRole(viewer, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: f.ns })
        const headers = withKey((yield* insertServiceKey(viewer, { namespaceId: f.ns })).key)
        expect(expectData(yield* call(f, "GET", `agents/${agent.id}`, undefined, headers), 200)).toEqual(agent)
        expect(expectData(yield* call(f, "GET", "agents", undefined, headers), 200)).toEqual([agent])
        expectError(yield* call(f, "POST", "agents", { name: "x", configurationId: f.configurationId }, headers), 403, "FORBIDDEN")
        expectError(yield* call(f, "PATCH", `agents/${agent.id}`, { configurationId: f.configurationId }, headers), 403, "FORBIDDEN")
        expectError(yield* call(f, "POST", `agents/${agent.id}/deploy`, undefined, headers), 403, "FORBIDDEN")
        expectError(yield* call(f, "POST", `agents/${agent.id}/stop`, undefined, headers), 403, "FORBIDDEN")
        expectError(yield* call(f, "DELETE", `agents/${agent.id}`, undefined, headers), 403, "FORBIDDEN")
      }))
  })
})
