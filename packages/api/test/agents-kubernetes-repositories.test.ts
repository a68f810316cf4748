/**
 * Repository credentials end to end on the `kubernetes` Compute Driver: the real API and worker,
 * the run's shared API server and controllers with the test node running the Pods' real OpenClaw
 * gateways, a real credential service process sharing the database and the loopback code host.
 * An Agent bound to `widgets` is deployed: its revision's Secret holds the material and is
 * mounted into the gateway container; `git ls-remote https://github.com/acme/widgets` with
 * exactly the environment of the running gateway process lists the repository through the
 * listener. A redeploy retires the first revision's Secret and session (401); stop removes the
 * last Secret and closes its session; deletion leaves no repository Secret. No bearer appears in
 * logs, audit rows, revisions, API responses or the Deployment.
 */
import { describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { freePort } from "@svc/core/embedded-postgres"
import { makeCodehostRepoDriver, RepoDriver } from "@svc/core/drivers/repo"
import type { NamespaceId } from "@svc/core/schema"
import { Effect, Layer, Redacted } from "effect"
import { afterAll } from "vitest"
import { frozenGrant, NS_A } from "../../../testing/credentialService.js"
import { until, workItemProgress } from "../../../testing/poll.js"
import { prepareRepositoryWorld, processEnvironment, runWith } from "../../../testing/repositoryWorld.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { gatewayFixture } from "./support/gatewayWorld.js"
import { expectData, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { kubernetesApiWorkerLayer } from "./support/kubernetesApiWorker.js"
import { kubernetesTestNode } from "./support/kubernetesTestNode.js"
import { fakeModelValues } from "./support/modelAgent.js"
import { expectListed, listenerStatus } from "./support/repositoryGateway.js"

const GOOD_KEY = "sk-k8s-repo-e2e-3b9d"
const fixture = await gatewayFixture("svc-k8s-repo-e2e-", GOOD_KEY)
const listenPort = await freePort()
const world = await prepareRepositoryWorld({ listenPort })
afterAll(() => world.close(), 60_000)
const driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: world.files.socketPath, sessionDurationSeconds: 900 }, world.registry)
// On the test node a Pod reaches the listener where the service does: on loopback.
const settings = { repositoryListenerUrl: `http://127.0.0.1:${listenPort}` }
const { layer: kubernetes, owned, object, node, cluster } = kubernetesTestNode("repo", settings)
/** The driver over the same cluster, for what the test does itself (the API's and worker's are in the layer). */
const compute = () => Kubernetes.makeKubernetesComputeFor(cluster(), settings)
const layer = kubernetesApiWorkerLayer(kubernetes, fixture.dataDir).pipe(Layer.provide(Layer.succeed(RepoDriver, driver)))
const kns = Compute.kubernetesNamespace({ id: NS_A as NamespaceId })

interface SecretLike { data: Record<string, string> }
interface DeploymentLike { spec: { template: { spec: { volumes: Array<{ name: string; secret?: { secretName: string } }> } } } }

/** The bearer a revision's Secret holds for `acme/widgets`. */
const secretBearer = (revisionId: string, agentId: string) =>
  Effect.map(object<SecretLike>("Secret", kns, Compute.repositoriesObjectName({ agentId, revisionId })), (secret) =>
    Buffer.from(secret?.data[Compute.bearerKey("acme/widgets")] ?? "", "base64").toString("utf8"))

/** `git ls-remote` with exactly the environment of the gateway process the test node runs for the Agent's ready Pod. */
const lsRemoteFromGateway = () =>
  Effect.promise(() => {
    const pids = [...node().processes().values()].flatMap((entry) => (entry.ready && entry.pid !== undefined ? [entry.pid] : []))
    expect(pids).toHaveLength(1)
    const env = processEnvironment(pids[0]!)
    return runWith(env, ["git", "ls-remote", "https://github.com/acme/widgets"]).then((result) => ({ env, result }))
  })

describe("repository credentials on the kubernetes Compute Driver", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("deploy mounts the material and the gateway reaches the repository; redeploy, stop and delete remove Secrets and close sessions", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const pg = yield* PgClient.PgClient
        yield* Effect.promise(() => world.startService(Redacted.value(pg.config.url!)))
        // The registry approves `widgets` for Namespace A, whose id is fixed: its row and Kubernetes namespace.
        yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${NS_A}, 'k8s-repos', 'ready') ON CONFLICT (id) DO NOTHING`
        owned.add(kns)
        yield* compute().provisionNamespace({ id: NS_A as NamespaceId })
        const admin = yield* seedAdmin("k8s-repos@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)
        const ns = `/namespaces/${NS_A}`
        const secret = expectData(yield* call("POST", `${ns}/secrets`, { name: "model-key", value: GOOD_KEY }), 201)
        const configuration = expectData(yield* call("POST", `${ns}/configurations`, { kind: "agent", values: fakeModelValues(fixture.fake()) }), 201)
        const role = expectData(yield* call("POST", `${ns}/iam/roles`, { name: "use-model-key", permissions: ["secret:operate"] }), 201)
        const agent = expectData(yield* call("POST", `${ns}/agents`, {
          name: "k8s-repo-bot",
          configurationId: configuration.id,
          harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: NS_A, id: secret.id } },
          repositoryBindings: [{ repositoryRef: "widgets" }]
        }), 201)
        expectData(yield* call("POST", `${ns}/iam/access-bindings`, { principalId: agent.servicePrincipalId, roleId: role.id, resource: { kind: "secret", id: secret.id } }), 201)
        const agentPath = `${ns}/agents/${agent.id}`
        const deploy = Effect.gen(function* () {
          const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
          const done = expectData(yield* until(call("GET", `${agentPath}/deployments/${revision.id}`),
            (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed", { progress: workItemProgress(revision.id) }), 200)
          expect(done.status, JSON.stringify(done.error)).toBe("succeeded")
          return revision
        })

        const first = yield* deploy
        expect(first.repositoryCredentials).toEqual([frozenGrant(world.registry, NS_A, "widgets", "git-write")])
        const name = Compute.agentObjectName(agent.id)
        const deployment = (yield* object<DeploymentLike>("Deployment", kns, name))!
        expect(deployment.spec.template.spec.volumes).toContainEqual({
          name: "repositories",
          secret: { secretName: Compute.repositoriesObjectName({ agentId: agent.id, revisionId: first.id }), defaultMode: 0o440 }
        })
        const bearer1 = yield* secretBearer(first.id, agent.id)
        expect(bearer1.length).toBeGreaterThan(20)
        expect(JSON.stringify(deployment)).not.toContain(bearer1)
        const listed1 = yield* lsRemoteFromGateway()
        expect(listed1.env.GH_HOST).toBe(`127.0.0.1:${listenPort}`)
        expectListed(listed1.result)

        // Redeploy: the new revision has its own Secret and session; the first's are gone.
        const second = yield* deploy
        const bearer2 = yield* secretBearer(second.id, agent.id)
        expect(bearer2).not.toBe(bearer1)
        expect(yield* object("Secret", kns, Compute.repositoriesObjectName({ agentId: agent.id, revisionId: first.id }))).toBeUndefined()
        expect(yield* Effect.promise(() => listenerStatus(world.service().listenerUrl, bearer1))).toBe(401)
        expectListed((yield* lsRemoteFromGateway()).result)

        // Stop: the last Secret goes and its session is closed.
        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, { progress: workItemProgress(agent.id) })
        expect(yield* object("Secret", kns, Compute.repositoriesObjectName({ agentId: agent.id, revisionId: second.id }))).toBeUndefined()
        expect(yield* Effect.promise(() => listenerStatus(world.service().listenerUrl, bearer2))).toBe(401)

        // Delete: no repository Secret of the Agent is left.
        expectData(yield* call("DELETE", agentPath), 202)
        yield* until(call("GET", agentPath), (r) => r.status === 404, { progress: workItemProgress(agent.id) })
        const left = yield* compute().repositoryClients!.revisions({ namespaceId: NS_A as NamespaceId, agentId: agent.id })
        expect(left).toEqual([])

        // No bearer in logs, audit rows, revisions or API responses.
        const logs = yield* LogCapture
        const audit = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`
        const revisions = yield* sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM agent_revisions r`
        const haystacks = [
          ...logs.entries.map((e) => JSON.stringify(e)),
          ...audit.map((a) => a.row),
          ...revisions.map((r) => r.row),
          JSON.stringify(first),
          JSON.stringify(second),
          world.service().process.output()
        ]
        expect(haystacks.length).toBeGreaterThan(10)
        for (const haystack of haystacks) {
          expect(haystack).not.toContain(bearer1)
          expect(haystack).not.toContain(bearer2)
        }
      }), 20 * 60_000)
  })
})
