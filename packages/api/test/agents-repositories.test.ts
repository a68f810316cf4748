/**
 * Repository settings of Agents (SPEC 2.4, 2.6, 2.14): create, PATCH and provision admit only
 * references the registry approves for the Namespace with an allowed profile; deploy freezes
 * the grants with their fingerprint into `repositoryCredentials`. Codes:
 * docs/decisions/repository-credentials.md. Without a Repo Driver: agents.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { makeCodehostRepoDriver, RepoDriver } from "@svc/core/drivers/repo"
import { RoleId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { frozenGrant, NS_A, NS_B, sampleRegistry } from "../../../testing/credentialService.js"
import { bindRole } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, type Headers, seedAdmin, send } from "./support/iamServer.js"

const registry = sampleRegistry()
const driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: "/nonexistent/control.sock", sessionDurationSeconds: 900 }, registry)

const fixture = (namespaceId: string, label: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${namespaceId}, ${label}, 'ready') ON CONFLICT (id) DO NOTHING`
    const admin = yield* seedAdmin(`repos-${label}@example.com`)
    const call = (method: string, path: string, body?: unknown, headers: Headers = admin.headers) =>
      send(baseUrl, method, `/namespaces/${namespaceId}/${path}`, headers, body)
    const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: {} }), 201)
    const secret = expectData(yield* call("POST", "secrets", { name: `model-key-${label}`, value: "sk-model-key-value" }), 201)
    const harnessAuth = { method: "api_key", source: { kind: "secret", namespaceId, id: secret.id } }
    return { sql, call, configurationId: configuration.id as string, secretId: secret.id as string, harnessAuth }
  })

const agentCount = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM agents`)

describe("Agent repository admission", () => {
  it.layer(apiTestLayer().pipe(Layer.provide(Layer.succeed(RepoDriver, driver))), { timeout: 120_000 })((it) => {
    it.effect("create and PATCH admit approved references with allowed profiles; refusals write nothing", () =>
      Effect.gen(function* () {
        const f = yield* fixture(NS_A, "repos-a")
        const create = (name: string, body: Record<string, unknown>) =>
          f.call("POST", "agents", { name, configurationId: f.configurationId, ...body })
        const before = (yield* agentCount)[0]!.n
        expectError(yield* create("x1", { repositoryBindings: [{ repositoryRef: "gadgets" }] }), 404, "NOT_FOUND")
        expectError(yield* create("x2", { repositoryBindings: [{ repositoryRef: "widgets", profile: "git-full" }] }), 409, "RESOURCE_CONFLICT")
        expectError(yield* create("x3", { repositoryBindings: [{ repositoryRef: "widgets", profile: "admin" }] }), 409, "RESOURCE_CONFLICT")
        expectError(yield* create("x4", { repositoryAccess: { defaultProfile: "git-full", repositories: [{ repositoryRef: "widgets" }] } }), 409, "RESOURCE_CONFLICT")
        expect((yield* agentCount)[0]!.n).toBe(before)

        // A direct binding defaults to git-write, which A may use.
        const bound = expectData(yield* create("bound", { repositoryBindings: [{ repositoryRef: "widgets" }] }), 201)
        expect(bound.repositoryBindings).toEqual([{ repositoryRef: "widgets", profile: "git-write" }])
        const access = expectData(yield* create("access", {
          repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: "widgets" }] }
        }), 201)
        expect(access.repositoryAccess).toEqual({ defaultProfile: "git-read", repositories: [{ repositoryRef: "widgets" }] })

        expectError(yield* f.call("PATCH", `agents/${bound.id}`, {
          configurationId: f.configurationId,
          repositoryBindings: [{ repositoryRef: "widgets", profile: "git-full" }]
        }), 409, "RESOURCE_CONFLICT")
        expect(expectData(yield* f.call("GET", `agents/${bound.id}`), 200).repositoryBindings).toEqual([
          { repositoryRef: "widgets", profile: "git-write" }
        ])
        const patched = expectData(yield* f.call("PATCH", `agents/${bound.id}`, {
          configurationId: f.configurationId,
          repositoryBindings: [{ repositoryRef: "widgets", profile: "git-read" }]
        }), 200)
        expect(patched.repositoryBindings).toEqual([{ repositoryRef: "widgets", profile: "git-read" }])
      }))

    it.effect("Namespace B gets only what the registry approves for B", () =>
      Effect.gen(function* () {
        const f = yield* fixture(NS_B, "repos-b")
        expectError(yield* f.call("POST", "agents", {
          name: "b-writer",
          configurationId: f.configurationId,
          repositoryBindings: [{ repositoryRef: "widgets" }]
        }), 409, "RESOURCE_CONFLICT")
        expectData(yield* f.call("POST", "agents", {
          name: "b-reader",
          configurationId: f.configurationId,
          repositoryBindings: [{ repositoryRef: "widgets", profile: "git-read" }]
        }), 201)
      }))

    it.effect("deploy freezes the admitted grants with their fingerprint into repositoryCredentials", () =>
      Effect.gen(function* () {
        const f = yield* fixture(NS_A, "repos-deploy")
        const agent = expectData(yield* f.call("POST", "agents", {
          name: "deployer",
          configurationId: f.configurationId,
          harnessAuth: f.harnessAuth,
          repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: "widgets", profile: "git-write" }] }
        }), 201)
        const role = RoleId.make()
        yield* f.sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${NS_A}, ${`operate-${role}`}, ARRAY['secret:operate'])`
        yield* bindRole(agent.servicePrincipalId, role, { kind: "secret", id: f.secretId, namespaceId: NS_A })
        const revision = expectData(yield* f.call("POST", `agents/${agent.id}/deploy`), 202)
        expect(revision.repositoryCredentials).toEqual([frozenGrant(registry, NS_A, "widgets", "git-write")])
        expect(expectData(yield* f.call("GET", `agents/${agent.id}/revisions/${revision.id}`), 200).repositoryCredentials).toEqual(
          revision.repositoryCredentials
        )
      }))
  })
})
