/**
 * The authorization matrix: every protected route of SvcApi (found with HttpApi.reflect, so a
 * new route is covered the moment it is added) against every kind of caller, asserting the
 * exact status. A protected route without an expectation here fails the test.
 */
import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Authentication, SvcApi } from "@svc/core/api"
import { BuiltinRoles } from "@svc/core/iam"
import { AgentId, ConfigurationId, CredentialSourceId, PresetId, RequestId, RevisionId, RoleId, SecretId, ServiceAccountId, ServicePrincipalId, WorkId } from "@svc/core/schema"
import { Effect } from "effect"
import {
  bindInstallationAdmin,
  bindRole,
  createAccount,
  createNamespaceRow,
  createServicePrincipal,
  insertServiceKey,
  PASSWORD,
  type SeededAccount,
  signedInSession
} from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { withBundledPlugins } from "./support/pluginsWorld.js"
import {
  apiTestLayer,
  expectError,
  type Headers,
  ORIGIN,
  seedNamespace,
  send,
  withKey,
  withSession
} from "./support/iamServer.js"

const Callers = [
  "anonymous",
  "revokedKey",
  "expiredKey",
  "foreignNamespaceKey",
  "keyWithoutGrant",
  "humanWithoutGrant",
  "administrator"
] as const
type Caller = (typeof Callers)[number]

/** Callers whose credential is not valid: every protected route is 401 for them. */
const unauthenticated = ["anonymous", "revokedKey", "expiredKey"] as const
type Judged = Exclude<Caller, (typeof unauthenticated)[number]>

interface Fixture {
  readonly ns: string
  readonly otherNs: string
  readonly admin: SeededAccount
  readonly human: SeededAccount
  /** A fresh Installation-scoped service principal without grants. */
  readonly freshServicePrincipal: () => Effect.Effect<string, unknown, SqlClient.SqlClient>
  /** A fresh enrolled account without grants (the target of account operations). */
  readonly freshAccount: () => Effect.Effect<SeededAccount, unknown, SqlClient.SqlClient>
}

interface Prepared {
  readonly path: string
  readonly body?: unknown
}

interface RouteCase {
  readonly prepare: (f: Fixture) => Effect.Effect<Prepared, unknown, SqlClient.SqlClient>
  readonly expect: Record<Judged, number>
}

const unique = () => Math.random().toString(36).slice(2, 10)

const customRole = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${id}, ${namespaceId}, ${`r-${unique()}`}, ARRAY['agent:read'])`
    return id
  })

const nsBinding = (namespaceId: string) =>
  Effect.gen(function* () {
    const principal = yield* createServicePrincipal(`b-${unique()}`, namespaceId)
    return yield* bindRole(principal, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: namespaceId })
  })

const fixed = (prepared: Prepared) => () => Effect.succeed(prepared)

/** A Secret row (sealed bytes irrelevant here), for the routes that need one. */
const secretRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = SecretId.make()
    yield* sql`
      INSERT INTO secrets (id, namespace_id, name, driver, key_id, nonce, ciphertext, tag)
      VALUES (${id}, ${namespaceId}, ${`s-${unique()}`}, 'builtin', '0000000000000000',
        ${new Uint8Array(12)}, ${new Uint8Array(1)}, ${new Uint8Array(16)})
    `
    return id
  })

/** A Configuration row, for the routes that need one. */
const configurationRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = ConfigurationId.make()
    yield* sql`
      INSERT INTO configurations (id, namespace_id, kind, generation, "values")
      VALUES (${id}, ${namespaceId}, 'agent', 1, '{}'::jsonb)
    `
    return id
  })

/** An Agent row (with its principal) on a Configuration, for the routes that need one. */
const agentRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const configurationId = yield* configurationRow(namespaceId)
    const principal = ServicePrincipalId.make()
    const id = AgentId.make()
    yield* sql`INSERT INTO principals (id, kind, namespace_id, name) VALUES (${principal}, 'agent', ${namespaceId}, ${`agent-${unique()}`})`
    yield* sql`
      INSERT INTO agents (id, namespace_id, name, configuration_id, service_principal_id, execution_mode, settings)
      VALUES (${id}, ${namespaceId}, ${`agent-${unique()}`}, ${configurationId}, ${principal}, 'embedded', '{"harnessAuth": {"method": "runtime"}}'::jsonb)
    `
    return { id, configurationId }
  })

/** A provisioning record initiated by `initiator`, its work not started (reads as failed: retryable). */
const provisioningRow = (namespaceId: string, initiator: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = WorkId.make()
    const request = {
      configuration: { values: {}, secretBindings: {} },
      agent: { name: `p-${unique()}`, executionMode: "embedded", backendId: null, settings: { harnessAuth: null }, workspaceDefaultsId: null, initialWorkspaceFiles: null, harnessSecretId: null }
    }
    yield* sql`
      INSERT INTO agent_provisioning (id, namespace_id, request_id, body_digest, initiator_principal_id, request)
      VALUES (${id}, ${namespaceId}, ${RequestId.make()}, ${"0".repeat(64)}, ${initiator}, ${JSON.stringify(request)}::jsonb)
    `
    return id
  })

/** An Agent with one revision (its deployment queued). */
const revisionRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const agent = yield* agentRow(namespaceId)
    const id = RevisionId.make()
    yield* sql`
      INSERT INTO agent_revisions (id, agent_id, namespace_id, configuration_id, configuration_generation, snapshot)
      VALUES (${id}, ${agent.id}, ${namespaceId}, ${agent.configurationId}, 1, ${JSON.stringify({
        id,
        agentId: agent.id,
        namespaceId,
        backendId: null,
        compute: { id: "local", implementation: "local" },
        configuration: {},
        configurationGeneration: 1,
        configurationId: agent.configurationId,
        configurationKind: "agent",
        secretBindings: {},
        harness: { id: "openclaw", mode: "embedded", auth: { method: "runtime" } },
        plugins: { driver: { id: "none", implementation: "none" }, plugins: {} },
        pluginApprovers: null,
        repositoryCredentials: []
      })}::jsonb)
    `
    return { agentId: agent.id, revisionId: id }
  })

/** A Preset row with an empty template, for the routes that need one. */
const presetRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = PresetId.make()
    yield* sql`INSERT INTO presets (id, namespace_id, name, template) VALUES (${id}, ${namespaceId}, ${`p-${unique()}`}, '{}'::jsonb)`
    return id
  })

// credential-sources: a ready source row, for the routes that need one.
const credentialSourceRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = CredentialSourceId.make()
    yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state) VALUES (${id}, ${namespaceId}, ${`cs-${unique()}`}, 'modelvendor', 'ready')`
    return id
  })
// end credential-sources

/** Namespace-level IAM routes: hidden (404) from callers who cannot read the Namespace. */
const inNamespace = (success: number) => ({
  foreignNamespaceKey: 403,
  keyWithoutGrant: 404,
  humanWithoutGrant: 404,
  administrator: success
})
/** Installation-level routes: never hidden, 403 without the grant. */
const onInstallation = (success: number) => ({
  foreignNamespaceKey: 403,
  keyWithoutGrant: 403,
  humanWithoutGrant: 403,
  administrator: success
})
/** Account management: a human administrator's session only; a key is 401 (SPEC 5.5.4). */
const humanAdministratorOnly = (success: number) => ({
  foreignNamespaceKey: 401,
  keyWithoutGrant: 401,
  humanWithoutGrant: 403,
  administrator: success
})

const routes: Record<string, RouteCase> = {
  // Installation (SPEC 4.2)
  "GET /installation": { prepare: fixed({ path: "/installation" }), expect: onInstallation(200) },
  "GET /backends": { prepare: fixed({ path: "/backends" }), expect: onInstallation(200) },
  // Namespaces (SPEC 4.2)
  "POST /namespaces": {
    prepare: () => Effect.succeed({ path: "/namespaces", body: { name: `n-${unique()}` } }),
    expect: onInstallation(201)
  },
  // A list is filtered, never refused.
  "GET /namespaces": {
    prepare: fixed({ path: "/namespaces" }),
    expect: { foreignNamespaceKey: 200, keyWithoutGrant: 200, humanWithoutGrant: 200, administrator: 200 }
  },
  "GET /namespaces/:namespaceId": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}` }),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId": {
    prepare: () => Effect.map(createNamespaceRow(`d-${unique()}`), (id) => ({ path: `/namespaces/${id}` })),
    expect: inNamespace(202)
  },
  // IAM Roles (SPEC 4.7)
  "POST /namespaces/:namespaceId/iam/roles": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/roles`, body: { name: `r-${unique()}`, permissions: ["agent:read"] } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/iam/roles": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/roles` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/iam/roles/:roleId": {
    prepare: (f) => Effect.map(customRole(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/roles/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/iam/roles/:roleId": {
    prepare: (f) => Effect.map(customRole(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/roles/${id}` })),
    expect: inNamespace(204)
  },
  // IAM AccessBindings (SPEC 4.7)
  "POST /namespaces/:namespaceId/iam/access-bindings": {
    prepare: (f) =>
      Effect.map(createServicePrincipal(`p-${unique()}`, f.ns), (principalId) => ({
        path: `/namespaces/${f.ns}/iam/access-bindings`,
        body: { principalId, roleId: BuiltinRoles.namespaceViewer.id, resource: { kind: "namespace", id: f.ns } }
      })),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/iam/access-bindings": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/access-bindings` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/iam/access-bindings/:bindingId": {
    prepare: (f) => Effect.map(nsBinding(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/access-bindings/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/iam/access-bindings/:bindingId": {
    prepare: (f) => Effect.map(nsBinding(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/access-bindings/${id}` })),
    expect: inNamespace(204)
  },
  // Secrets (DESIGN §7)
  "POST /namespaces/:namespaceId/secrets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/secrets`, body: { name: `s-${unique()}`, value: "matrix" } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/secrets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/secrets` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/secrets/:secretId": {
    prepare: (f) => Effect.map(secretRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/secrets/${id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/secrets/:secretId": {
    prepare: (f) => Effect.map(secretRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/secrets/${id}`, body: { value: "matrix-2" } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/secrets/:secretId": {
    prepare: (f) => Effect.map(secretRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/secrets/${id}` })),
    expect: inNamespace(204)
  },
  // Configurations (SPEC 4.3)
  "POST /namespaces/:namespaceId/configurations": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/configurations`, body: { kind: "agent", values: {} } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/configurations": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/configurations` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/configurations/:configurationId": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/configurations/${id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/configurations/:configurationId": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/configurations/${id}`, body: { values: { a: 1 } } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/configurations/:configurationId": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/configurations/${id}` })),
    expect: inNamespace(204)
  },
  // Agents (SPEC 4.4)
  "POST /namespaces/:namespaceId/agents": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (configurationId) => ({ path: `/namespaces/${f.ns}/agents`, body: { name: `a-${unique()}`, configurationId } })),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/agents": { prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/agents` }), expect: inNamespace(200) },
  "GET /namespaces/:namespaceId/agents/:agentId": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/agents/:agentId": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}`, body: { configurationId: a.configurationId } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/agents/:agentId": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}` })),
    expect: inNamespace(202)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/deploy": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/deploy` })),
    expect: inNamespace(202)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/stop": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/stop` })),
    expect: inNamespace(202)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/deployments/${r.revisionId}` })),
    expect: inNamespace(200)
  },
  // Permission probes (extension): about the caller only on the Installation; read first otherwise.
  "GET /permissions": {
    prepare: fixed({ path: "/permissions" }),
    expect: { foreignNamespaceKey: 200, keyWithoutGrant: 200, humanWithoutGrant: 200, administrator: 200 }
  },
  "GET /namespaces/:namespaceId/permissions": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/permissions` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/permissions": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/permissions` })),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/revisions": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/revisions` })),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/revisions/:revisionId": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/revisions/${r.revisionId}` })),
    expect: inNamespace(200)
  },
  // Extensions (DESIGN §18). The revision has no work item: its status is terminal, so the event
  // stream sends one event and closes.
  "GET /namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/events": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/deployments/${r.revisionId}/events` })),
    expect: inNamespace(200)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/revisions/:revisionId/redeploy": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/revisions/${r.revisionId}/redeploy` })),
    expect: inNamespace(202)
  },
  "POST /namespaces/:namespaceId/agents/provision": {
    prepare: (f) =>
      Effect.succeed({
        path: `/namespaces/${f.ns}/agents/provision`,
        body: { requestId: RequestId.make(), name: `a-${unique()}`, configuration: { kind: "agent", values: {} } }
      }),
    expect: inNamespace(202)
  },
  "GET /namespaces/:namespaceId/agents/provision/:workId": {
    prepare: (f) => Effect.map(provisioningRow(f.ns, f.admin.principalId), (id) => ({ path: `/namespaces/${f.ns}/agents/provision/${id}` })),
    expect: inNamespace(200)
  },
  "POST /namespaces/:namespaceId/agents/provision/:workId/retry": {
    prepare: (f) => Effect.map(provisioningRow(f.ns, f.admin.principalId), (id) => ({ path: `/namespaces/${f.ns}/agents/provision/${id}/retry` })),
    expect: inNamespace(202)
  },
  // plugins (issue 13, DESIGN §15): this server selects the bundled Plugin Driver.
  "POST /namespaces/:namespaceId/agents/plugins": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/agents/plugins`, body: {} }),
    expect: inNamespace(200)
  },
  "POST /namespaces/:namespaceId/agents/plugins/details": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/agents/plugins/details`, body: { pluginId: "bundled:zalo" } }),
    expect: inNamespace(200)
  },
  // end plugins
  // Presets (DESIGN §7)
  "POST /namespaces/:namespaceId/presets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/presets`, body: { name: `p-${unique()}`, template: {} } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/presets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/presets` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/presets/:presetId": {
    prepare: (f) => Effect.map(presetRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/presets/${id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/presets/:presetId": {
    prepare: (f) => Effect.map(presetRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/presets/${id}`, body: { name: `q-${unique()}` } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/presets/:presetId": {
    prepare: (f) => Effect.map(presetRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/presets/${id}` })),
    expect: inNamespace(204)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/diagnostics": {
    // The revision is not the active one: 409 once authorized.
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/deployments/${r.revisionId}/diagnostics` })),
    expect: inNamespace(409)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/workspace/files/:name": {
    // No Compute host in this in-process server: 503 once authorized.
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/workspace/files/USER.md` })),
    expect: inNamespace(503)
  },
  "PUT /namespaces/:namespaceId/agents/:agentId/workspace/files/:name": {
    // Never deployed: 409 once authorized.
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/workspace/files/USER.md`, body: { content: "x" } })),
    expect: inNamespace(409)
  },
  // Service principals (DESIGN §6)
  "POST /iam/service-principals": { prepare: fixed({ path: "/iam/service-principals", body: { name: "matrix" } }), expect: onInstallation(201) },
  "GET /iam/service-principals": { prepare: fixed({ path: "/iam/service-principals" }), expect: onInstallation(200) },
  "GET /iam/service-principals/:servicePrincipalId": {
    prepare: (f) => Effect.map(f.freshServicePrincipal(), (id) => ({ path: `/iam/service-principals/${id}` })),
    expect: onInstallation(200)
  },
  "DELETE /iam/service-principals/:servicePrincipalId": {
    prepare: (f) => Effect.map(f.freshServicePrincipal(), (id) => ({ path: `/iam/service-principals/${id}` })),
    expect: onInstallation(204)
  },
  "POST /namespaces/:namespaceId/iam/service-principals": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/service-principals`, body: { name: "matrix" } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/iam/service-principals": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/service-principals` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/iam/service-principals/:servicePrincipalId": {
    prepare: (f) =>
      Effect.map(createServicePrincipal(`s-${unique()}`, f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/service-principals/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/iam/service-principals/:servicePrincipalId": {
    prepare: (f) =>
      Effect.map(createServicePrincipal(`s-${unique()}`, f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/service-principals/${id}` })),
    expect: inNamespace(204)
  },
  // Service keys (SPEC 5.5): administer on the Installation; a Namespace key cannot manage keys.
  "POST /api/auth/service-keys": {
    prepare: (f) =>
      Effect.map(f.freshServicePrincipal(), (servicePrincipalId) => ({
        path: "/api/auth/service-keys",
        body: { servicePrincipalId, name: "matrix" }
      })),
    expect: onInstallation(201)
  },
  "DELETE /api/auth/service-keys/:keyId": {
    prepare: (f) =>
      Effect.gen(function* () {
        const { id } = yield* insertServiceKey(yield* f.freshServicePrincipal())
        return { path: `/api/auth/service-keys/${id}` }
      }),
    expect: onInstallation(200)
  },
  // Sessions (SPEC 4.1, 5.2): sign-out needs a session; a key has none.
  "POST /api/auth/sign-out": {
    prepare: fixed({ path: "/api/auth/sign-out" }),
    expect: { foreignNamespaceKey: 401, keyWithoutGrant: 401, humanWithoutGrant: 200, administrator: 200 }
  },
  // Accounts and recovery (SPEC 4.1): a current human Installation administrator.
  "POST /api/auth/accounts": {
    prepare: () => Effect.succeed({ path: "/api/auth/accounts", body: { email: `new-${unique()}@example.com`, password: PASSWORD } }),
    expect: humanAdministratorOnly(201)
  },
  "GET /api/auth/accounts/:userId": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}` })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/disable": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/disable`, body: { expectedVersion: 1 } })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/enable": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/enable`, body: { expectedVersion: 1 } })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/revoke": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/revoke`, body: { expectedVersion: 1 } })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/enrol": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/enrol` })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/methods/:methodId/detach": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: `/api/auth/accounts/${a.userId}/methods/${a.methodId}/detach`,
        body: { expectedVersion: 1 }
      })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/providers/codehost": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: `/api/auth/accounts/${a.userId}/providers/codehost`,
        body: { expectedVersion: 1, subject: "12345" }
      })),
    expect: humanAdministratorOnly(409)
  },
  "POST /api/auth/accounts/:userId/providers/idprovider": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: `/api/auth/accounts/${a.userId}/providers/idprovider`,
        body: { expectedVersion: 1, subject: "someone" }
      })),
    expect: humanAdministratorOnly(409)
  },
  "GET /api/auth/recovery": { prepare: fixed({ path: "/api/auth/recovery" }), expect: humanAdministratorOnly(404) },
  "POST /api/auth/recovery": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: "/api/auth/recovery",
        body: { expectedCurrentUserId: a.userId, expectedVersion: 1, userId: f.admin.userId }
      })),
    expect: humanAdministratorOnly(409)
  },
  // Audit (DESIGN §18, an extension)
  "GET /audit": { prepare: fixed({ path: "/audit" }), expect: onInstallation(200) },
  "GET /namespaces/:namespaceId/audit": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/audit` }),
    expect: inNamespace(200)
  },
  // --- service accounts (issue 13; SPEC 4.5): no ServiceAccount Driver here, so accounts are native ---
  ...((): Record<string, RouteCase> => {
    const accountRow = (namespaceId: string) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const id = ServiceAccountId.make()
        yield* sql`INSERT INTO service_accounts (id, namespace_id, name, state) VALUES (${id}, ${namespaceId}, ${`sa-${unique()}`}, 'ready')`
        return `/namespaces/${namespaceId}/service-accounts/${id}`
      })
    /** A Secret named for the reference, and an account to set it on. */
    const withSecret = (namespaceId: string) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const secret = yield* secretRow(namespaceId)
        const [row] = yield* sql<{ name: string }>`SELECT name FROM secrets WHERE id = ${secret}`
        return { path: `${yield* accountRow(namespaceId)}/credential`, body: { kind: "api_key", secretRef: { name: row!.name, key: "value" } } }
      })
    return {
      "POST /namespaces/:namespaceId/service-accounts": {
        prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/service-accounts`, body: { name: `sa-${unique()}` } }),
        expect: inNamespace(201)
      },
      "GET /namespaces/:namespaceId/service-accounts": {
        prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/service-accounts` }),
        expect: inNamespace(200)
      },
      "GET /namespaces/:namespaceId/service-accounts/:serviceAccountId": {
        prepare: (f) => Effect.map(accountRow(f.ns), (path) => ({ path })),
        expect: inNamespace(200)
      },
      "POST /namespaces/:namespaceId/service-accounts/:serviceAccountId/credentials": {
        // No ServiceAccount Driver: 503 once authorized.
        prepare: (f) => Effect.map(accountRow(f.ns), (path) => ({ path: `${path}/credentials`, body: {} })),
        expect: inNamespace(503)
      },
      "PATCH /namespaces/:namespaceId/service-accounts/:serviceAccountId/credential": {
        prepare: (f) => withSecret(f.ns),
        expect: inNamespace(200)
      },
      "DELETE /namespaces/:namespaceId/service-accounts/:serviceAccountId": {
        prepare: (f) => Effect.map(accountRow(f.ns), (path) => ({ path })),
        expect: inNamespace(204)
      }
    }
  })(),
  // --- end service accounts ---
  // credential-sources (SPEC 4.6). This Installation selects no Credential Gateway: an authorized
  // create or delete answers 503, a read still succeeds (its status says why).
  "POST /namespaces/:namespaceId/credential-sources": {
    prepare: (f) =>
      Effect.map(secretRow(f.ns), (secretId) => ({
        path: `/namespaces/${f.ns}/credential-sources`,
        body: { name: `cs-${unique()}`, type: "modelvendor", secrets: { api_key: { kind: "secret", namespaceId: f.ns, id: secretId } } }
      })),
    expect: inNamespace(503)
  },
  "GET /namespaces/:namespaceId/credential-sources": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/credential-sources` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/credential-sources/:credentialSourceId": {
    prepare: (f) => Effect.map(credentialSourceRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/credential-sources/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/credential-sources/:credentialSourceId": {
    prepare: (f) => Effect.map(credentialSourceRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/credential-sources/${id}` })),
    expect: inNamespace(503)
  }
  // end credential-sources
}

interface ProtectedRoute {
  readonly key: string
  readonly method: string
}

/** Every route of SvcApi behind the Authentication middleware. */
const protectedRoutes = (): Array<ProtectedRoute> => {
  const found: Array<ProtectedRoute> = []
  HttpApi.reflect(SvcApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if ([...middleware].some((tag) => tag.key === Authentication.key)) {
        found.push({ key: `${endpoint.method} ${endpoint.path}`, method: endpoint.method })
      }
    }
  })
  return found
}

describe("the authorization matrix", () => {
  it("has an expectation for every protected route, and no stale ones", () => {
    const keys = protectedRoutes().map((route) => route.key)
    expect(keys.filter((key) => routes[key] === undefined), "protected routes without an expectation").toEqual([])
    expect(Object.keys(routes).filter((key) => !keys.includes(key)), "expectations for routes that do not exist").toEqual([])
  })

  it.layer(apiTestLayer(withBundledPlugins), { timeout: 300_000 })((it) => {
    it.effect("every caller gets the exact status on every protected route", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("matrix")
        const otherNs = yield* seedNamespace("matrix-other")
        const admin = yield* createAccount("matrix-admin@example.com")
        yield* bindInstallationAdmin(admin.principalId)
        const human = yield* createAccount("matrix-human@example.com")
        // A fully privileged Installation principal whose keys are revoked or expired.
        const privileged = yield* createServicePrincipal("matrix-privileged")
        yield* bindInstallationAdmin(privileged)
        const revoked = yield* insertServiceKey(privileged, { revoked: true })
        const expired = yield* insertServiceKey(privileged, { expiresAt: new Date(Date.now() - 1000) })
        // A Namespace administrator's key, of the other Namespace.
        const foreign = yield* createServicePrincipal("matrix-foreign", otherNs)
        yield* bindRole(foreign, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: otherNs })
        const bare = yield* createServicePrincipal("matrix-bare")
        let accounts = 0
        const fixture: Fixture = {
          ns,
          otherNs,
          admin,
          human,
          freshServicePrincipal: () => createServicePrincipal(`fresh-${unique()}`),
          freshAccount: () => createAccount(`target-${++accounts}-${unique()}@example.com`)
        }
        // Fresh credentials per route, so a route that ends a session cannot affect the next.
        const credentials = (caller: Caller): Effect.Effect<Headers, unknown, SqlClient.SqlClient> => {
          switch (caller) {
            case "anonymous":
              return Effect.succeed({})
            case "revokedKey":
              return Effect.succeed(withKey(revoked.key))
            case "expiredKey":
              return Effect.succeed(withKey(expired.key))
            case "foreignNamespaceKey":
              return Effect.map(insertServiceKey(foreign, { namespaceId: otherNs }), (k) => withKey(k.key))
            case "keyWithoutGrant":
              return Effect.map(insertServiceKey(bare), (k) => withKey(k.key))
            case "humanWithoutGrant":
              return Effect.map(signedInSession(human.userId), (s) => withSession(s.token))
            case "administrator":
              return Effect.map(signedInSession(admin.userId), (s) => withSession(s.token))
          }
        }
        const mismatches: Array<string> = []
        let checked = 0
        for (const route of protectedRoutes()) {
          const routeCase = routes[route.key]
          if (routeCase === undefined) continue
          const prepared = yield* routeCase.prepare(fixture)
          // The administrator goes last: its request may change what the others would see.
          for (const caller of Callers) {
            const expected = (unauthenticated as ReadonlyArray<string>).includes(caller) ? 401 : routeCase.expect[caller as Judged]
            const headers = yield* credentials(caller)
            const result = yield* send(baseUrl, route.method, prepared.path, headers, prepared.body)
            checked++
            if (result.status !== expected) {
              mismatches.push(`${route.key} as ${caller}: expected ${expected}, got ${result.status} ${result.text.slice(0, 160)}`)
            } else if (expected >= 400) {
              expect(result.body.error.code).toBe(
                { 401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "RESOURCE_CONFLICT", 503: "DEPENDENCY_UNAVAILABLE" }[expected]
              )
            }
          }
        }
        expect(mismatches).toEqual([])
        expect(checked).toBe(protectedRoutes().length * Callers.length)
        expect(checked).toBeGreaterThanOrEqual(30 * Callers.length)
      }))

    it.effect("credentials: Authorization headers, invalid keys beside a valid cookie, forged, expired and revoked cookies are 401", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* createAccount("matrix-credentials@example.com")
        yield* bindInstallationAdmin(admin.principalId)
        const session = yield* signedInSession(admin.userId)
        const cookie = withSession(session.token)
        const sp = yield* createServicePrincipal("matrix-credentials-sp")
        yield* bindInstallationAdmin(sp)
        const key = yield* insertServiceKey(sp)
        const get = (headers: Headers) => send(baseUrl, "GET", "/installation", headers)
        expect((yield* get(cookie)).status).toBe(200)
        expect((yield* get(withKey(key.key))).status).toBe(200)
        expectError(yield* get({ authorization: `Bearer ${key.key}` }), 401, "UNAUTHENTICATED")
        expectError(yield* get({ ...cookie, authorization: "Basic YWRtaW46YWRtaW4=" }), 401, "UNAUTHENTICATED")
        expectError(yield* get({ ...withKey(key.key), authorization: `Bearer ${key.key}` }), 401, "UNAUTHENTICATED")
        // A supplied key wins over the cookie, and an invalid one never falls back to it.
        expectError(yield* get({ ...cookie, "x-api-key": "svck_not-a-real-key" }), 401, "UNAUTHENTICATED")
        expectError(yield* get({ ...cookie, "x-api-key": "" }), 401, "UNAUTHENTICATED")
        // Forged, expired and revoked cookies.
        expectError(yield* get(withSession(`${session.token}x`)), 401, "UNAUTHENTICATED")
        expectError(yield* get(withSession("svcs_forged")), 401, "UNAUTHENTICATED")
        const sql = yield* SqlClient.SqlClient
        const expiring = yield* signedInSession(admin.userId)
        yield* sql`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = ${expiring.id}`
        expectError(yield* get(withSession(expiring.token)), 401, "UNAUTHENTICATED")
        const revoking = yield* signedInSession(admin.userId)
        yield* sql`UPDATE sessions SET revoked_at = now() WHERE id = ${revoking.id}`
        expectError(yield* get(withSession(revoking.token)), 401, "UNAUTHENTICATED")
        // A mutation with a cookie from an untrusted Origin is refused; a key needs no Origin.
        const foreignOrigin = yield* send(baseUrl, "POST", "/iam/service-principals", { ...cookie, origin: "http://evil.example" }, { name: "x" })
        expectError(foreignOrigin, 403, "FORBIDDEN")
        expect((yield* send(baseUrl, "POST", "/iam/service-principals", withKey(key.key), { name: "by-key" })).status).toBe(201)
        expect(ORIGIN).toBe(cookie.origin)
      }))
  })
})
