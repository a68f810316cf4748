/**
 * Repository credentials end to end (issue 12, item 5): the real API and worker on the `local`
 * Compute Driver with real OpenClaw gateways, a real credential service process sharing the
 * database, and the loopback code host. An Agent bound to `widgets` is deployed; `git ls-remote
 * https://github.com/acme/widgets`, run in the gateway's mount namespace as its user with exactly
 * the environment of the running gateway process, lists the repository through the listener. A
 * redeploy retires the first revision's session (its bearer gets 401) and the new gateway reaches
 * the repository with its own; stop closes the last one (401, the upstream token revoked by a
 * DELETE the code host saw) and removes the material; `repository.cleanup` disposes both. No
 * bearer appears in logs, audit rows or API responses. Deleting a running Agent closes its
 * session. With the credential service away, a
 * deployment fails with DEPENDENCY_UNAVAILABLE and admits no session.
 */
import { describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import * as Compute from "@svc/core/drivers/compute"
import { makeCodehostRepoDriver, RepoDriver } from "@svc/core/drivers/repo"
import type { NamespaceId } from "@svc/core/schema"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll } from "vitest"
import { frozenGrant, NS_A } from "../../../testing/credentialService.js"
import { testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { until, workItemProgress } from "../../../testing/poll.js"
import { prepareRepositoryWorld } from "../../../testing/repositoryWorld.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { gatewayFixture, gatewayWorldLayer } from "./support/gatewayWorld.js"
import { fakeModelValues } from "./support/modelAgent.js"
import { expectData, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { expectListed, gatewayProcess, listenerStatus, lsRemoteAsGateway, materialBearer } from "./support/repositoryGateway.js"

const GOOD_KEY = "sk-repo-e2e-7d3a1f"
const fixture = await gatewayFixture("svc-repo-e2e-", GOOD_KEY)
const world = await prepareRepositoryWorld()
afterAll(() => world.close(), 60_000)
const driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: world.files.socketPath, sessionDurationSeconds: 900 }, world.registry)
const layer = gatewayWorldLayer(fixture.dataDir).pipe(Layer.provide(Layer.succeed(RepoDriver, driver)))
const agentsRoot = path.join(fixture.dataDir, "namespaces", NS_A, "agents")
let started = false

/** The credential service on the test's database, Namespace A, and what an Agent of it needs (per `label`). */
const setUp = (label: string) => Effect.gen(function* () {
  const { baseUrl } = yield* TestServer
  const sql = yield* SqlClient.SqlClient
  const pg = yield* PgClient.PgClient
  if (!started) yield* Effect.promise(() => world.startService(Redacted.value(pg.config.url!)))
  started = true
  // The registry approves `widgets` for Namespace A, whose id is fixed: its row and runtime directory.
  yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${NS_A}, 'repos-e2e', 'ready') ON CONFLICT (id) DO NOTHING`
  const local = Compute.makeLocalCompute(fixture.dataDir, { runtimeRoot: testRuntimeRoot() })
  yield* local.provisionNamespace({ id: NS_A as NamespaceId })
  const admin = yield* seedAdmin(`repos-e2e-${label}@example.com`)
  const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)
  const ns = `/namespaces/${NS_A}`
  const secret = expectData(yield* call("POST", `${ns}/secrets`, { name: `model-key-${label}`, value: GOOD_KEY }), 201)
  const configuration = expectData(yield* call("POST", `${ns}/configurations`, { kind: "agent", values: fakeModelValues(fixture.fake()) }), 201)
  const role = expectData(yield* call("POST", `${ns}/iam/roles`, { name: `use-model-key-${label}`, permissions: ["secret:operate"] }), 201)
  const createAgent = (name: string) =>
    Effect.gen(function* () {
      const agent = expectData(yield* call("POST", `${ns}/agents`, {
        name,
        configurationId: configuration.id,
        harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: NS_A, id: secret.id } },
        repositoryBindings: [{ repositoryRef: "widgets" }]
      }), 201)
      expectData(yield* call("POST", `${ns}/iam/access-bindings`, {
        principalId: agent.servicePrincipalId,
        roleId: role.id,
        resource: { kind: "secret", id: secret.id }
      }), 201)
      return { id: agent.id as string, path: `${ns}/agents/${agent.id}`, root: path.join(agentsRoot, agent.id) }
    })
  const deploy = (agentPath: string) =>
    Effect.gen(function* () {
      const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
      const done = yield* until(call("GET", `${agentPath}/deployments/${revision.id}`),
        (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed", { progress: workItemProgress(revision.id) })
      return { revision, deployment: expectData(done, 200) }
    })
  return { sql, call, createAgent, deploy }
})

const sessionsOf = (agentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ revision_id: string; state: string }>`
    SELECT revision_id, state FROM agent_repository_sessions WHERE agent_id = ${agentId} ORDER BY created_at`)

describe("repository credentials on a real gateway", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("deploy reaches the repository with the gateway's environment; redeploy and stop close the sessions", () =>
      Effect.gen(function* () {
        const { sql, call, createAgent, deploy } = yield* setUp("live")
        const agent = yield* createAgent("repo-bot")
        const first = yield* deploy(agent.path)
        expect(first.deployment).toMatchObject({ status: "succeeded", error: null })
        expect(first.revision.repositoryCredentials).toEqual([frozenGrant(world.registry, NS_A, "widgets", "git-write")])

        const gateway1 = gatewayProcess(agent.root)
        const material1 = path.join(agent.root, "repo-credentials", first.revision.id)
        expect(gateway1.env).toMatchObject({
          GIT_CONFIG_GLOBAL: path.join(material1, "gitconfig"),
          GH_CONFIG_DIR: path.join(material1, "gh"),
          GH_HOST: new URL(world.service().listenerUrl).host
        })
        expectListed(yield* Effect.promise(() => lsRemoteAsGateway(gateway1, "acme/widgets")))
        const bearer1 = materialBearer(agent.root, first.revision.id)
        expect(world.host.tokens).toHaveLength(1)

        // Redeploy: the new gateway has its own session; the first revision's is closed.
        const second = yield* deploy(agent.path)
        expect(second.deployment).toMatchObject({ status: "succeeded", error: null })
        const bearer2 = materialBearer(agent.root, second.revision.id)
        expect(bearer2).not.toBe(bearer1)
        expect(yield* Effect.promise(() => listenerStatus(world.service().listenerUrl, bearer1))).toBe(401)
        expect(fs.existsSync(material1)).toBe(false)
        const gateway2 = gatewayProcess(agent.root)
        expect(gateway2.env.GIT_CONFIG_GLOBAL).toBe(path.join(agent.root, "repo-credentials", second.revision.id, "gitconfig"))
        expectListed(yield* Effect.promise(() => lsRemoteAsGateway(gateway2, "acme/widgets")))

        // Stop: the last session closes, its upstream token is revoked, the material goes.
        expectData(yield* call("POST", `${agent.path}/stop`), 202)
        yield* until(call("GET", agent.path), (r) => r.body.data?.activeRevisionId === undefined, { progress: workItemProgress(agent.id) })
        expect(yield* Effect.promise(() => listenerStatus(world.service().listenerUrl, bearer2))).toBe(401)
        expect(fs.existsSync(path.join(agent.root, "repo-credentials"))).toBe(true)
        expect(fs.readdirSync(path.join(agent.root, "repo-credentials"))).toEqual([])
        expect(world.host.tokens).toHaveLength(2)
        expect([...world.host.revoked].sort()).toEqual(world.host.tokens.map((t) => t.token).sort())
        expect(world.host.requests.filter((r) => r === "DELETE /installation/token")).toHaveLength(2)

        // repository.cleanup disposes both sessions and forgets them.
        yield* until(sessionsOf(agent.id), (rows) => rows.length === 0, 120)
        expect(yield* sql`SELECT DISTINCT state FROM repository_sessions`).toEqual([{ state: "DISPOSED" }])

        // No bearer in logs, audit rows, revisions or deployment responses.
        const logs = yield* LogCapture
        const audit = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`
        const revisions = yield* sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM agent_revisions r`
        const responses = [
          yield* call("GET", `${agent.path}/revisions`),
          yield* call("GET", `${agent.path}/deployments/${first.revision.id}`),
          yield* call("GET", agent.path)
        ].map((r) => JSON.stringify(r.body))
        const haystacks = [
          ...logs.entries.map((e) => JSON.stringify(e)),
          ...audit.map((a) => a.row),
          ...revisions.map((r) => r.row),
          ...responses,
          world.service().process.output()
        ]
        expect(haystacks.length).toBeGreaterThan(10)
        for (const haystack of haystacks) {
          expect(haystack).not.toContain(bearer1)
          expect(haystack).not.toContain(bearer2)
          expect(haystack).not.toContain("svcrs_")
        }
      }), 20 * 60_000)

    it.effect("deleting a running Agent closes its session and removes its material", () =>
      Effect.gen(function* () {
        const { call, createAgent, deploy } = yield* setUp("delete")
        const agent = yield* createAgent("repo-bot-delete")
        const { revision, deployment } = yield* deploy(agent.path)
        expect(deployment).toMatchObject({ status: "succeeded", error: null })
        const bearer = materialBearer(agent.root, revision.id)
        const tokens = world.host.tokens.length
        expect(yield* Effect.promise(() => listenerStatus(world.service().listenerUrl, bearer))).toBe(200)
        expect(world.host.tokens).toHaveLength(tokens + 1)

        expectData(yield* call("DELETE", agent.path), 202)
        yield* until(call("GET", agent.path), (r) => r.status === 404, { progress: workItemProgress(agent.id) })
        expect(yield* Effect.promise(() => listenerStatus(world.service().listenerUrl, bearer))).toBe(401)
        expect(world.host.revoked).toContain(world.host.tokens[tokens]!.token)
        expect(fs.existsSync(agent.root)).toBe(false)
        yield* until(sessionsOf(agent.id), (rows) => rows.length === 0, 120)
      }), 20 * 60_000)

    it.effect("with the credential service away, the deployment fails with DEPENDENCY_UNAVAILABLE and admits no session", () =>
      Effect.gen(function* () {
        const { sql, createAgent, deploy } = yield* setUp("away")
        yield* Effect.promise(() => world.stopService())
        const sessions = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM repository_sessions`
        const agent = yield* createAgent("repo-bot-away")
        const { revision, deployment } = yield* deploy(agent.path)
        expect(deployment).toEqual({
          deploymentId: revision.id,
          namespaceId: NS_A,
          agentId: agent.id,
          status: "failed",
          error: { code: "DEPENDENCY_UNAVAILABLE", message: "The credential service is unavailable." },
          progress: null,
          warnings: []
        })
        expect(yield* sql`SELECT attempt_count FROM work_items WHERE kind = 'agent.deploy' AND key = ${revision.id}`).toEqual([{ attempt_count: 4 }])
        expect(yield* sessionsOf(agent.id)).toEqual([])
        expect(yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM repository_sessions`).toEqual(sessions)
        expect(fs.existsSync(agent.root)).toBe(false)
      }), 5 * 60_000)
  })
})
