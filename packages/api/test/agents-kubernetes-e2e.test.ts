/**
 * An Agent's life through the API and the worker on the `kubernetes` Compute Driver: the run's
 * shared real API server and controllers, with the test node running the Pods' real gateways
 * (testing/kubernetes). Namespace ready with its namespace and quota; deploy (its initial
 * workspace files in the Agent's volume), redeploy in place,
 * stop and delete, each asserted on the cluster's objects; Namespace deletion removes its
 * Kubernetes namespace.
 */
import { describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { until, workItemProgress } from "../../../testing/poll.js"
import { TestServer } from "../../../testing/server.js"
import { expectData, expectError, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { kubernetesApiWorkerLayer } from "./support/kubernetesApiWorker.js"
import { kubernetesTestNode } from "./support/kubernetesTestNode.js"
import { gatewayFixture } from "./support/gatewayWorld.js"
import { fakeModelValues, setUpModelAgent } from "./support/modelAgent.js"

const GOOD_KEY = "sk-k8s-e2e-good-7a1c3e"
const world = await gatewayFixture("svc-k8s-e2e-", GOOD_KEY)
/** One driver for the API and the worker, over the shared cluster, reaching gateways through the test node. */
const { layer: kubernetes, owned, neverReady, object, nodeDir } = kubernetesTestNode("e2e")

const layer = kubernetesApiWorkerLayer(kubernetes, world.dataDir)

describe("an Agent's life on the kubernetes Compute Driver", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("Namespace ready, deploy, redeploy, stop, delete, Namespace deletion", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("k8s-admin@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)

        const capabilities = expectData(yield* call("GET", "/installation"), 200).capabilities
        expect(capabilities.agentProvisioning).toEqual({ executionModes: ["embedded", "dedicated"] })
        expect(capabilities.nativeWorkers).toEqual({})

        const initialWorkspaceFiles = { "SOUL.md": "# Soul\nStaged before the first start.\n" }
        const { ns, configuration, agent, agentPath } = yield* setUpModelAgent(call, {
          namespace: "k8s",
          agent: "k8s-bot",
          modelKey: GOOD_KEY,
          fake,
          initialWorkspaceFiles
        })
        const kns = Compute.kubernetesNamespace({ id: Schema.decodeSync(NamespaceId)(ns) })
        owned.add(kns)
        expect((yield* object("Namespace", undefined, kns))?.metadata?.labels?.["svc/namespace-id"]).toBe(ns)
        expect(yield* object("ResourceQuota", kns, "svc-quota")).toBeDefined()
        expect(yield* object("LimitRange", kns, "svc-limits")).toBeDefined()

        // `runtime` harness authentication is refused on cluster compute (SPEC 2.5).
        expectError(
          yield* call("PATCH", agentPath, { configurationId: configuration.id, harnessAuth: { method: "runtime" } }),
          409,
          "RESOURCE_CONFLICT"
        )

        const deploy = () =>
          Effect.gen(function* () {
            const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
            const done = expectData(
              yield* until(
                call("GET", `${agentPath}/deployments/${revision.id}`),
                (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed",
                { progress: workItemProgress(revision.id) }
              ),
              200
            )
            expect(done.status, JSON.stringify(done.error)).toBe("succeeded")
            return revision.id as string
          })

        const name = Compute.agentObjectName(agent.id)
        const first = yield* deploy()
        const deployment = (yield* object<{ spec: { replicas: number; template: { metadata: { labels: Record<string, string> } } } }>("Deployment", kns, name))!
        expect(deployment.metadata?.labels?.["svc/revision-id"]).toBe(first)
        expect(deployment.spec.replicas).toBe(1)
        expect(deployment.spec.template.metadata.labels["svc/agent-id"]).toBe(agent.id)
        const secret = (yield* object<{ data: Record<string, string> }>("Secret", kns, name))!
        expect(Buffer.from(secret.data.MODEL_API_KEY!, "base64").toString()).toBe(GOOD_KEY)
        const configMap = (yield* object<{ data: Record<string, string> }>("ConfigMap", kns, name))!
        // What `local` renders for the same values (key order aside: the revision's snapshot is jsonb).
        expect(JSON.parse(configMap.data["openclaw.json"]!)).toEqual(JSON.parse(Compute.renderPodGatewayConfig(fakeModelValues(fake))))
        expect(expectData(yield* call("GET", agentPath), 200).activeRevisionId).toBe(first)
        // The initial workspace files, in the Agent's volume before its gateway ran (SPEC 4.4).
        const soul = path.join(nodeDir(), "volumes", kns, name, "workspace", "SOUL.md")
        expect(fs.readFileSync(soul, "utf8")).toBe(initialWorkspaceFiles["SOUL.md"])
        expect((yield* object<{ data: Record<string, string> }>("ConfigMap", kns, `${name}-files`))?.data)
          .toEqual({ "files.json": JSON.stringify(initialWorkspaceFiles) })

        // Redeploy replaces the gateway in place: same Deployment, the new revision.
        const second = yield* deploy()
        const redeployed = (yield* object<{ spec: { replicas: number } }>("Deployment", kns, name))!
        expect(redeployed.metadata?.uid).toBe(deployment.metadata?.uid)
        expect(redeployed.metadata?.labels?.["svc/revision-id"]).toBe(second)
        // Initial files are delivered until the first activation only; the workspace keeps them.
        expect(yield* object("ConfigMap", kns, `${name}-files`)).toBeUndefined()
        expect(fs.readFileSync(soul, "utf8")).toBe(initialWorkspaceFiles["SOUL.md"])

        // Stop: zero replicas, no Service.
        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 180)
        expect((yield* object<{ spec: { replicas: number } }>("Deployment", kns, name))!.spec.replicas).toBe(0)
        expect(yield* object("Service", kns, name)).toBeUndefined()

        // Delete: the Agent and every object it owned are gone.
        expectData(yield* call("DELETE", agentPath), 202)
        yield* until(call("GET", agentPath), (r) => r.status === 404, 180)
        for (const kind of ["Deployment", "Service", "Secret", "ConfigMap"]) expect(yield* object(kind, kns, name)).toBeUndefined()

        // The Namespace (emptied first) and its Kubernetes namespace go.
        expect((yield* call("DELETE", `/namespaces/${ns}/configurations/${configuration.id}`)).status).toBe(204)
        const secrets = expectData(yield* call("GET", `/namespaces/${ns}/secrets`), 200) as Array<{ id: string }>
        for (const s of secrets) expect((yield* call("DELETE", `/namespaces/${ns}/secrets/${s.id}`)).status).toBe(204)
        const deleted = yield* call("DELETE", `/namespaces/${ns}`)
        expect(deleted.status, deleted.text).toBe(202)
        yield* until(call("GET", `/namespaces/${ns}`), (r) => r.status === 404, 240)
        expect(yield* object("Namespace", undefined, kns)).toBeUndefined()
      }), 15 * 60_000)

    it.effect("a revision whose Pod never becomes Ready ends CONVERGENCE_DEADLINE_EXCEEDED with its runtimeFailure", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("k8s-never@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)
        const { ns, agent, agentPath } = yield* setUpModelAgent(call, { namespace: "k8s-never", agent: "never-ready", modelKey: GOOD_KEY, fake })
        owned.add(Compute.kubernetesNamespace({ id: Schema.decodeSync(NamespaceId)(ns) }))
        neverReady.add(agent.id)
        const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202).id as string
        // The worker notes the failed readiness check and retries; then the deadline passes.
        const noted = () => sql<{ runtime_failure: unknown }>`SELECT runtime_failure FROM agent_revisions WHERE id = ${revision}`
        yield* until(noted(), (rows) => rows[0]?.runtime_failure !== null, { progress: workItemProgress(revision) })
        yield* sql`UPDATE work_items SET deadline_at = now() WHERE kind = 'agent.deploy' AND key = ${revision}`
        const failed = expectData(
          yield* until(call("GET", `${agentPath}/deployments/${revision}`), (r) => r.body.data?.status === "failed", 120),
          200
        )
        expect(failed.error.code).toBe("CONVERGENCE_DEADLINE_EXCEEDED")
        expect(failed.error.message).toBe("The deployment did not converge before its deadline.")
        expect(failed.error.data.timeoutMs).toBeGreaterThan(0)
        expect(failed.error.data.runtimeFailure).toEqual({
          component: "gateway",
          check: "readiness",
          checkedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          code: "GATEWAY_START_TIMEOUT"
        })
        expect(expectData(yield* call("GET", agentPath), 200).activeRevisionId).toBeUndefined()
      }), 15 * 60_000)
  })
})
