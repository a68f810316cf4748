/**
 * Dedicated execution on the `kubernetes` Compute Driver (SPEC 2.5, 4.5), through the API and the
 * worker: the run's shared API server, the file's test node running each Pod's real gateway and
 * its `harness` container (`svc harness`), the fake model server as the provider and the loopback
 * vendor Admin API issuing managed access tokens. The harness credentials reach the harness
 * container only; the model probe goes gateway -> harness -> provider.
 */
import { afterAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Compute from "@svc/core/drivers/compute"
import { MODEL_VENDOR_ADMIN_ORIGIN, selectServiceAccountDriver } from "@svc/core/drivers/serviceAccount"
import { Effect, Layer } from "effect"
import { startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { startModelVendorAdmin } from "../../../testing/modelVendorAdmin.js"
import { until } from "../../../testing/poll.js"
import { TestServer } from "../../../testing/server.js"
import { deployToEnd, dedicatedNamespace, expectHarnessOnly, expectNoCredentialIn, fakeConfiguration } from "./support/dedicatedAgent.js"
import { gatewayFixture } from "./support/gatewayWorld.js"
import { expectData, expectError, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { kubernetesApiWorkerLayer } from "./support/kubernetesApiWorker.js"
import { kubernetesTestNode } from "./support/kubernetesTestNode.js"
import { letAgentUseSecret } from "./support/modelAgent.js"
import { ADMIN_KEY, managedInstallation, TEST_TIMEOUT_MS, vendorKeyFile, WORKSPACE_ID } from "./support/serviceAccountWorld.js"

const TOKEN = "dt-k8s-dedicated-4b2e9a71"
const WRONG = "dt-k8s-dedicated-wrong-0c5d"
const world = await gatewayFixture("svc-k8s-dedicated-", TOKEN)
const vendor = await startModelVendorAdmin({ adminKey: ADMIN_KEY, workspaceId: WORKSPACE_ID })
afterAll(() => vendor.close())
const installation = managedInstallation(vendorKeyFile(), "kubernetes")
const node = kubernetesTestNode("dedicated")
// No periodic recovery sweep after the worker's first: after a failed deployment the sweep
// starts the active revision again, rewriting the harness Secret this test inspects.
const layer = kubernetesApiWorkerLayer(node.layer, world.dataDir, installation, "1 hour").pipe(
  Layer.provide(selectServiceAccountDriver(installation, new Map([[MODEL_VENDOR_ADMIN_ORIGIN, vendor.origin]]), TEST_TIMEOUT_MS))
)

const adminCall = (email: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(email)
    return (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)
  })

describe("dedicated execution on the kubernetes Compute Driver", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("direct_token: the harness alone holds the token; a rejected token fails; redeploy replaces the harness Secret; delete leaves nothing", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const call = yield* adminCall("dedicated-dt@example.com")
        const sql = yield* SqlClient.SqlClient
        const { ns, kns } = yield* dedicatedNamespace(call, node, "dedicated-dt")
        const configurationId = yield* fakeConfiguration(call, ns, fake)
        const secret = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "direct-token", value: TOKEN }), 201)
        const harnessAuth = { method: "direct_token", source: { kind: "secret", namespaceId: ns, id: secret.id } }
        // Embedded execution cannot hold a direct token (SPEC 2.5): 409 at create.
        expectError(yield* call("POST", `/namespaces/${ns}/agents`, { name: "dt-embedded", configurationId, harnessAuth }), 409, "RESOURCE_CONFLICT")
        const agent = expectData(yield* call("POST", `/namespaces/${ns}/agents`, {
          name: "dt-bot",
          configurationId,
          executionMode: "dedicated",
          harnessAuth
        }), 201)
        const agentPath = `/namespaces/${ns}/agents/${agent.id}`
        // `runtime` harness authentication is refused on cluster compute (SPEC 2.5).
        expectError(yield* call("PATCH", agentPath, { configurationId, harnessAuth: { method: "runtime" } }), 409, "RESOURCE_CONFLICT")
        // Deploy needs the Agent principal's operate on the token's Secret (SPEC 2.5): 403 without it.
        const denied = yield* call("POST", `${agentPath}/deploy`)
        expectError(denied, 403, "FORBIDDEN")
        yield* letAgentUseSecret(call, { ns, agent, secretId: secret.id, roleName: "use-direct-token" })

        const first = yield* deployToEnd(call, agentPath)
        expect(first.status, JSON.stringify(first.error)).toBe("succeeded")
        // The probe reached the provider through the harness, with the token; the placeholder never did.
        const seen = fake.requests()
        expect(seen.some((r) => r.path === "/v1/chat/completions" && r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true)
        expect(seen.filter((r) => r.headers.authorization !== `Bearer ${TOKEN}`)).toEqual([])
        const name = Compute.agentObjectName(agent.id)
        const config = JSON.parse((yield* node.object<{ data: Record<string, string> }>("ConfigMap", kns, name))!.data["openclaw.json"]!)
        expect(config.models.providers.fake.baseUrl).toBe(`http://127.0.0.1:${Compute.HARNESS_PORT}/providers/fake`)
        expect(config.models.providers.fake.apiKey).toBe(Compute.HARNESS_PLACEHOLDER)

        const { harness, pod } = yield* expectHarnessOnly(node, kns, agent.id, { SVC_HARNESS_TOKEN: TOKEN })
        // The harness container, field by field.
        expect(pod.automountServiceAccountToken).toBe(false)
        expect(pod.shareProcessNamespace).toBeUndefined()
        expect(harness.image).toBe("ghcr.io/svc/svc:0.1.0")
        expect(harness.args).toEqual(["harness"])
        expect(harness.env).toEqual([
          { name: "SVC_HARNESS_LISTEN", value: "127.0.0.1:18790" },
          { name: "SVC_HARNESS_METHOD", value: "direct_token" },
          { name: "SVC_HARNESS_UPSTREAMS", value: JSON.stringify({ fake: fake.baseUrl }) }
        ])
        expect(harness.resources).toEqual({ requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "256Mi" } })
        expect(harness.securityContext).toEqual({
          runAsNonRoot: true,
          runAsUser: 1001,
          runAsGroup: 1001,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
          seccompProfile: { type: "RuntimeDefault" }
        })
        expect(harness.volumeMounts).toBeUndefined()
        expect(harness.ports).toBeUndefined()

        // A rejected token ends the deployment RUNTIME_AUTHENTICATION_FAILED; the harness Secret was replaced.
        expectData(yield* call("PATCH", `/namespaces/${ns}/secrets/${secret.id}`, { value: WRONG }), 200)
        const rejected = yield* deployToEnd(call, agentPath)
        expect(rejected.status).toBe("failed")
        expect(rejected.error).toEqual({ code: "RUNTIME_AUTHENTICATION_FAILED", message: "The model provider rejected the Agent's credential." })
        const replaced = (yield* node.object<{ data: Record<string, string> }>("Secret", kns, `${name}-harness`))!
        expect(Buffer.from(replaced.data.SVC_HARNESS_TOKEN!, "base64").toString("utf8")).toBe(WRONG)
        expect(replaced.metadata?.labels?.["svc/revision-id"]).toBe(rejected.deploymentId)

        // The right token again: a new revision succeeds, its harness Secret holds the token.
        expectData(yield* call("PATCH", `/namespaces/${ns}/secrets/${secret.id}`, { value: TOKEN }), 200)
        const third = yield* deployToEnd(call, agentPath)
        expect(third.status, JSON.stringify(third.error)).toBe("succeeded")
        yield* expectHarnessOnly(node, kns, agent.id, { SVC_HARNESS_TOKEN: TOKEN })

        // An embedded Agent bound to a direct token (a row from before) is refused at deploy: 409.
        yield* sql`UPDATE agents SET execution_mode = 'embedded' WHERE id = ${agent.id}`
        expectError(yield* call("POST", `${agentPath}/deploy`), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE agents SET execution_mode = 'dedicated' WHERE id = ${agent.id}`

        // Stop, then delete: every object of the Agent goes, the harness Secret included.
        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 180)
        expectData(yield* call("DELETE", agentPath), 202)
        yield* until(call("GET", agentPath), (r) => r.status === 404, 180)
        for (const [kind, object] of [["Deployment", name], ["Service", name], ["Secret", name], ["ConfigMap", name], ["Secret", `${name}-harness`]]) {
          expect(yield* node.object(kind!, kns, object!), `${kind} ${object}`).toBeUndefined()
        }
        yield* expectNoCredentialIn(node, [TOKEN, WRONG])
      }), 15 * 60_000)

    it.effect("provider_service_account: the managed access token and its workspace reach the provider from the harness only", () =>
      Effect.gen(function* () {
        const call = yield* adminCall("dedicated-sa@example.com")
        const { ns, kns } = yield* dedicatedNamespace(call, node, "dedicated-sa")
        const account = expectData(yield* call("POST", `/namespaces/${ns}/service-accounts`, { name: "harness" }), 201)
        expectData(yield* call("POST", `/namespaces/${ns}/service-accounts/${account.id}/credentials`, {}), 201)
        const accessToken = vendor.credentials().at(-1)!.access_token
        const fake = yield* Effect.acquireRelease(
          Effect.promise(() => startFakeModelServer({ apiKey: accessToken })),
          (server) => Effect.promise(() => server.close())
        )
        const configurationId = yield* fakeConfiguration(call, ns, fake)
        const agent = expectData(yield* call("POST", `/namespaces/${ns}/agents`, {
          name: "sa-bot",
          configurationId,
          executionMode: "dedicated",
          backendId: "accounts-main",
          harnessAuth: { method: "provider_service_account", serviceAccountId: account.id }
        }), 201)
        const done = yield* deployToEnd(call, `/namespaces/${ns}/agents/${agent.id}`)
        expect(done.status, JSON.stringify(done.error)).toBe("succeeded")
        // Every request the provider saw came from the harness: the token and its workspace header.
        const seen = fake.requests()
        expect(seen.some((r) => r.path === "/v1/chat/completions")).toBe(true)
        for (const request of seen) {
          expect(request.headers.authorization).toBe(`Bearer ${accessToken}`)
          expect(request.headers[Compute.WORKSPACE_HEADER]).toBe(WORKSPACE_ID)
        }
        const { harness } = yield* expectHarnessOnly(node, kns, agent.id, { SVC_HARNESS_TOKEN: accessToken, SVC_HARNESS_WORKSPACE_ID: WORKSPACE_ID })
        expect(harness.env?.find((variable) => variable.name === "SVC_HARNESS_METHOD")?.value).toBe("provider_service_account")
        yield* expectNoCredentialIn(node, [accessToken])
      }).pipe(Effect.scoped), 15 * 60_000)
  })
})
