/**
 * `credential_source` on the `kubernetes` Compute Driver (SPEC 2.5, 4.6), through the API and the
 * worker: the loopback Credential Gateway holds the provider's key; the harness container holds
 * none and sends the source's placeholder through the gateway's egress, which injects the key.
 * Neither container's environment, Secret or spec ever has it.
 */
import { afterAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Compute from "@svc/core/drivers/compute"
import { RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { bindRole } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { GATEWAY_TOKEN, gatewayInstallation } from "./support/credentialGatewayWorld.js"
import { dedicatedNamespace, deployToEnd, expectHarnessOnly, expectNoCredentialIn, fakeConfiguration } from "./support/dedicatedAgent.js"
import { gatewayFixture } from "./support/gatewayWorld.js"
import { expectData, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { kubernetesApiWorkerLayer } from "./support/kubernetesApiWorker.js"
import { kubernetesTestNode } from "./support/kubernetesTestNode.js"

const SOURCE_KEY = "sk-source-k8s-8d21f0c4"
const world = await gatewayFixture("svc-k8s-dedicated-source-", SOURCE_KEY)
const gateway = await startCredentialGateway({ token: GATEWAY_TOKEN })
const egress = await gateway.startEgress()
afterAll(async () => {
  await egress.close()
  await gateway.stop()
})
const node = kubernetesTestNode("dedicated-source")
const layer = kubernetesApiWorkerLayer(node.layer, world.dataDir, gatewayInstallation(gateway, "kubernetes", egress.url))

describe("credential_source on the kubernetes Compute Driver", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("the key reaches the provider only through the egress; neither container has it", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("dedicated-source@example.com")
        const call = (method: string, p: string, body?: unknown, headers: Headers = admin.headers) => send(baseUrl, method, p, headers, body)
        const { ns, kns } = yield* dedicatedNamespace(call, node, "dedicated-source")
        const secret = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "vendor-key", value: SOURCE_KEY }), 201)
        const source = expectData(yield* call("POST", `/namespaces/${ns}/credential-sources`, {
          name: "vendor",
          type: "modelvendor",
          secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } }
        }), 201)
        expect(gateway.providers.get(source.id)?.credentials).toEqual({ api_key: SOURCE_KEY })
        const agent = expectData(yield* call("POST", `/namespaces/${ns}/agents`, {
          name: "source-bot",
          configurationId: yield* fakeConfiguration(call, ns, fake),
          executionMode: "dedicated",
          harnessAuth: { method: "credential_source", sourceId: source.id }
        }), 201)
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, 'source-operator', ARRAY['credential_source:operate'])`
        yield* bindRole(agent.servicePrincipalId, role, { kind: "credential_source", id: source.id, namespaceId: ns })

        const done = yield* deployToEnd(call, `/namespaces/${ns}/agents/${agent.id}`)
        expect(done.status, JSON.stringify(done.error)).toBe("succeeded")
        // The probe went gateway -> harness -> egress (the placeholder swapped for the key) -> provider.
        const seen = fake.requests()
        expect(seen.some((r) => r.path === "/v1/chat/completions")).toBe(true)
        for (const request of seen) expect(request.headers.authorization).toBe(`Bearer ${SOURCE_KEY}`)
        expect(egress.requests().length).toBeGreaterThan(0)
        for (const request of egress.requests()) {
          expect(request).toEqual({ target: expect.stringMatching(new RegExp(`^${fake.baseUrl}/`)), provider: source.id })
        }

        // The harness Secret is empty: no key anywhere in the Pod.
        const { harness, gatewayEnv, harnessEnv } = yield* expectHarnessOnly(node, kns, agent.id, {})
        expect(harness.env).toEqual([
          { name: "SVC_HARNESS_LISTEN", value: `127.0.0.1:${Compute.HARNESS_PORT}` },
          { name: "SVC_HARNESS_METHOD", value: "credential_source" },
          { name: "SVC_HARNESS_UPSTREAMS", value: JSON.stringify({ fake: fake.baseUrl }) },
          { name: "SVC_HARNESS_EGRESS", value: egress.url },
          { name: "SVC_HARNESS_PLACEHOLDER", value: Compute.credentialSourcePlaceholder(source.id) }
        ])
        for (const env of [gatewayEnv, harnessEnv]) expect(env.some((entry) => entry.includes(SOURCE_KEY))).toBe(false)
        const name = Compute.agentObjectName(agent.id)
        const secrets = [yield* node.object("Secret", kns, name), yield* node.object("Secret", kns, `${name}-harness`)]
        for (const object of secrets) expect(JSON.stringify(object)).not.toContain(Buffer.from(SOURCE_KEY).toString("base64"))
        yield* expectNoCredentialIn(node, [SOURCE_KEY])
      }), 15 * 60_000)
  })
})
