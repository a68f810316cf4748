/**
 * The `credential_source` harness binding on `local` Compute with a Credential Gateway selected
 * (SPEC 2.5, 4.6, DESIGN §13), over the real API and a loopback gateway: admission keeps
 * answering 409 (no dedicated execution), and key-delivering bindings cannot be deployed.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { GATEWAY_TOKEN, gatewayInstallation, harnessWorld } from "./support/credentialGatewayWorld.js"
import { apiTestLayer, expectData, expectError } from "./support/iamServer.js"

const gateway = await startCredentialGateway({ token: GATEWAY_TOKEN })
afterAll(() => gateway.stop())
const world = harnessWorld

describe("harnessAuth credential_source on local Compute with a Credential Gateway", () => {
  it.layer(apiTestLayer(gatewayInstallation(gateway, "local")), { timeout: 120_000 })((it) => {
    it.effect("admission answers 409: the binding needs dedicated execution, which local does not offer", () =>
      Effect.gen(function* () {
        const { call, source, bound, configuration } = yield* world("csh-local")
        expectError(yield* call("POST", "agents", bound(source.id)), 409, "RESOURCE_CONFLICT")
        expectError(yield* call("POST", "agents", { ...bound(source.id), executionMode: "embedded" }), 409, "RESOURCE_CONFLICT")
        const plain = expectData(yield* call("POST", "agents", { name: "plain", configurationId: configuration.id }), 201)
        expectError(yield* call("PATCH", `agents/${plain.id}`, { configurationId: configuration.id, harnessAuth: { method: "credential_source", sourceId: source.id } }), 409, "RESOURCE_CONFLICT")
        expect(expectData(yield* call("GET", `agents/${plain.id}`), 200).harnessAuth).toBeNull()
      }))

    it.effect("deploy refuses an api_key binding with 409 while a Credential Gateway is selected", () =>
      Effect.gen(function* () {
        const { ns, call } = yield* world("csh-refuse")
        const { agent } = yield* setUpDeployableAgent(ns, (method, path, body) => call(method, path, body))
        const refused = yield* call("POST", `agents/${agent.id}/deploy`)
        expectError(refused, 409, "RESOURCE_CONFLICT")
        expect(refused.body.error.message).toBe(
          "While a Credential Gateway is selected, deployment refuses harness authentication api_key; bind a credential source."
        )
        expect(expectData(yield* call("GET", `agents/${agent.id}`), 200)).toMatchObject({ desiredRuntimeState: "stopped" })
        const sql = yield* SqlClient.SqlClient
        expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM agent_revisions WHERE agent_id = ${agent.id}`)[0]!.n).toBe(0)
      }))
  })
})

