/**
 * The native admin proxy's endpoint and diagnostics on the `kubernetes` Compute Driver as `svc`
 * builds it outside the cluster (a kubeconfig: the API server's Service proxy), through the API,
 * on the run's shared API server (issue 14). Only unreachable paths can run here (the API server
 * refuses to proxy to loopback, ../shared/k8s/README.md), and they run for real: an Agent whose
 * objects exist but whose Pod never runs (no node: its Service has no endpoint), then an API
 * server that does not listen. The Agent host answers 503 `DEPENDENCY_UNAVAILABLE` both times;
 * diagnostics report the Kubernetes checks, then 503 when no evidence can be read.
 */
import { describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { AuthSettings, nativeAdminPipeline } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { freePort } from "@svc/core/embedded-postgres"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { testSecretDriver } from "../../../testing/drivers.js"
import { bindInstallationAdmin, createAccount, createNamespaceRow, signedInSession } from "../../../testing/identity.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { REQUEST_ID, serveForTest, TestServer } from "../../../testing/server.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { expectData, send } from "./support/iamServer.js"
import { agentHost, CONSOLE_ORIGIN, hostRequest, type HostResponse, NATIVE_ADMIN, settings, sharedCookie } from "./support/nativeAdminServer.js"

const state = await sharedCluster()
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-k8s-admin-"))
/** The run's kubeconfig pointed at a loopback port where nothing listens: a stopped API server. */
const downKubeconfig = path.join(dir, "kubeconfig")
fs.writeFileSync(downKubeconfig, fs.readFileSync(state.kubeconfig, "utf8").replace(state.server, `https://127.0.0.1:${await freePort()}`))

const driverFor = (kubeconfigPath: string) =>
  Kubernetes.makeKubernetesComputeFor(
    Kubernetes.makeCluster(Kubernetes.loadKubeConfig({ kubeconfigPath, context: "test" })),
    { kubeconfigPath, context: "test" },
    { readinessTimeout: Duration.seconds(3), scope: `admin-${process.pid}` }
  )
const live = driverFor(state.kubeconfig)
/** The API's driver: the live cluster, until the test stops "its" API server. */
let current = live
const switchable: Compute.ComputeDriverShape = {
  ...live,
  startGateway: (spec) => current.startGateway(spec),
  gatewayHealth: (ref) => current.gatewayHealth(ref),
  diagnostics: (ref) => current.diagnostics(ref),
  privateEndpoint: (ref) => current.privateEndpoint(ref)
}

const api = serveForTest(nativeAdminPipeline({ development: true, maxBodyBytes: 448 * 1024 }, NATIVE_ADMIN)).pipe(
  Layer.provide(testSecretDriver),
  Layer.provide(Layer.succeed(Compute.ComputeDriver, switchable)),
  Layer.provide(Layer.succeed(AuthSettings, settings)),
  Layer.provide(Layer.succeed(InstallationConfiguration, {
    ...defaultInstallationConfig,
    nativeAdmin: NATIVE_ADMIN,
    drivers: { ...defaultInstallationConfig.drivers, compute: { id: "kubernetes" as const, kubeconfigPath: state.kubeconfig, context: "test" } }
  })),
  Layer.provideMerge(migratedDatabaseLayer)
)

const expectUnavailable = (result: HostResponse | { status: number; body: unknown }) =>
  expect({ status: result.status, body: result.body }).toEqual({
    status: 503,
    body: { error: { code: "DEPENDENCY_UNAVAILABLE", message: expect.any(String) }, meta: { requestId: expect.stringMatching(REQUEST_ID) } }
  })

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe("native admin and diagnostics on kubernetes, unreachable", () => {
  // Without test services: the driver's readiness retries run on the real clock.
  effectLayer(api, { timeout: 240_000, excludeTestServices: true })((it) => {
    it.effect("a Pod that never runs, then a stopped API server: the Agent host and diagnostics answer 503", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const account = yield* createAccount("k8s-admin@example.test")
        yield* bindInstallationAdmin(account.principalId)
        const token = (yield* signedInSession(account.userId)).token
        const headers = { cookie: sharedCookie(token), origin: CONSOLE_ORIGIN }
        const ns = yield* createNamespaceRow("k8s-admin")
        const call = (method: string, p: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${p}`, headers, body)
        const { agent } = yield* setUpDeployableAgent(ns, call)
        // The revision is active and desired running (no worker here), and its objects exist on
        // the cluster; no node runs its Pod, so its Service never gets an endpoint.
        const revision = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202)
        yield* sql`UPDATE agents SET active_revision_id = ${revision.id}, desired_runtime_state = 'running' WHERE id = ${agent.id}`
        const namespace = { id: NamespaceId.make(ns) }
        yield* live.provisionNamespace(namespace)
        const ref = { namespaceId: namespace.id, agentId: agent.id as string, revisionId: revision.id as string }
        const started = yield* Effect.either(live.startGateway({ ...ref, values: {}, env: {} }))
        expect(started._tag === "Left" && started.left).toMatchObject({ code: "GATEWAY_START_TIMEOUT" })

        const host = () => hostRequest(baseUrl, { host: agentHost(agent.id), headers: { cookie: sharedCookie(token) } })
        const diagnostics = () => call("POST", `agents/${agent.id}/deployments/${revision.id}/diagnostics`)
        expectUnavailable(yield* host())
        const checked = { checkedAt: expect.stringMatching(TIMESTAMP) }
        expect(expectData(yield* diagnostics(), 200).checks).toEqual([
          { component: "deployment", check: "available", state: "failed", ...checked, code: "DEPLOYMENT_AVAILABLE" },
          { component: "pod", check: "phase", state: "failed", ...checked, code: "POD_PHASE" },
          { component: "pod", check: "restarts", state: "succeeded", ...checked },
          { component: "gateway", check: "ready", state: "failed", ...checked, code: "GATEWAY_READY" },
          { component: "model", check: "auth", state: "unknown", checkedAt: null }
        ])

        // The API server stops answering: no evidence at all, and still no endpoint.
        current = driverFor(downKubeconfig)
        expectUnavailable(yield* host())
        expectUnavailable(yield* diagnostics())

        current = live
        yield* live.deleteGateway(ref)
        yield* live.teardownNamespace(namespace)
      }), 180_000)
  })
})
