/** The authorization matrix's callers, row fixtures and expectation shapes (authz-matrix.test.ts). */
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { AgentId, ConfigurationId, CredentialSourceId, PresetId, RequestId, RevisionId, RoleId, SecretId, ServicePrincipalId, WorkId } from "@svc/core/schema"
import { Effect } from "effect"
import {
  bindRole,
  createServicePrincipal,
  type SeededAccount
} from "../../../../testing/identity.js"

export const Callers = [
  "anonymous",
  "revokedKey",
  "expiredKey",
  "foreignNamespaceKey",
  "keyWithoutGrant",
  "humanWithoutGrant",
  "administrator"
] as const
export type Caller = (typeof Callers)[number]

/** Callers whose credential is not valid: every protected route is 401 for them. */
export const unauthenticated = ["anonymous", "revokedKey", "expiredKey"] as const
export type Judged = Exclude<Caller, (typeof unauthenticated)[number]>

export interface Fixture {
  readonly ns: string
  readonly otherNs: string
  readonly admin: SeededAccount
  readonly human: SeededAccount
  /** A fresh Installation-scoped service principal without grants. */
  readonly freshServicePrincipal: () => Effect.Effect<string, unknown, SqlClient.SqlClient>
  /** A fresh enrolled account without grants (the target of account operations). */
  readonly freshAccount: () => Effect.Effect<SeededAccount, unknown, SqlClient.SqlClient>
}

export interface Prepared {
  readonly path: string
  readonly body?: unknown
}

export interface RouteCase {
  readonly prepare: (f: Fixture) => Effect.Effect<Prepared, unknown, SqlClient.SqlClient>
  readonly expect: Record<Judged, number>
  /** The administrator's error code when it is not the status's usual one (409 INSTALLATION_EXISTS). */
  readonly code?: string
}

export const unique = () => Math.random().toString(36).slice(2, 10)

export const customRole = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${id}, ${namespaceId}, ${`r-${unique()}`}, ARRAY['agent:read'])`
    return id
  })

export const nsBinding = (namespaceId: string) =>
  Effect.gen(function* () {
    const principal = yield* createServicePrincipal(`b-${unique()}`, namespaceId)
    return yield* bindRole(principal, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: namespaceId })
  })

export const fixed = (prepared: Prepared) => () => Effect.succeed(prepared)

/** A Secret row (sealed bytes irrelevant here), for the routes that need one. */
export const secretRow = (namespaceId: string) =>
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
export const configurationRow = (namespaceId: string) =>
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
export const agentRow = (namespaceId: string) =>
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
export const provisioningRow = (namespaceId: string, initiator: string) =>
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
export const revisionRow = (namespaceId: string) =>
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
export const presetRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = PresetId.make()
    yield* sql`INSERT INTO presets (id, namespace_id, name, template) VALUES (${id}, ${namespaceId}, ${`p-${unique()}`}, '{}'::jsonb)`
    return id
  })

// credential-sources: a ready source row, for the routes that need one.
export const credentialSourceRow = (namespaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = CredentialSourceId.make()
    yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state) VALUES (${id}, ${namespaceId}, ${`cs-${unique()}`}, 'modelvendor', 'ready')`
    return id
  })
// end credential-sources

/** Namespace-level IAM routes: hidden (404) from callers who cannot read the Namespace. */
export const inNamespace = (success: number) => ({
  foreignNamespaceKey: 403,
  keyWithoutGrant: 404,
  humanWithoutGrant: 404,
  administrator: success
})
/** Installation-level routes: never hidden, 403 without the grant. */
export const onInstallation = (success: number) => ({
  foreignNamespaceKey: 403,
  keyWithoutGrant: 403,
  humanWithoutGrant: 403,
  administrator: success
})
/** Account management: a human administrator's session only; a key is 401 (SPEC 5.5.4). */
export const humanAdministratorOnly = (success: number) => ({
  foreignNamespaceKey: 401,
  keyWithoutGrant: 401,
  humanWithoutGrant: 403,
  administrator: success
})
