/**
 * The Compute Driver contract (DESIGN §8, §14): what every implementation must do, run against
 * `local` and `kubernetes` alike (packages/core/test/compute-contract.test.ts) with a real
 * gateway answered by the fake model server.
 */
import { expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Effect, Redacted } from "effect"
import type { FakeModelServer } from "./fakeModelServer.js"

export const CONTRACT_KEY = "sk-fake-good-0123456789"

export interface ContractSubject {
  readonly namespace: Compute.NamespaceRuntime
  readonly driver: Compute.ComputeDriverShape
  /** The same driver as a restarted worker builds it (no in-memory state carried over). */
  readonly restarted: () => Compute.ComputeDriverShape
  readonly fake: FakeModelServer
}

const values = (fake: FakeModelServer) => ({
  models: {
    providers: {
      fake: {
        baseUrl: fake.baseUrl,
        api: "openai-completions",
        apiKey: { source: "env", provider: "default", id: "FAKE_MODEL_KEY" },
        models: [{ id: fake.model, name: "Fake" }]
      }
    }
  },
  agents: { defaults: { model: `fake/${fake.model}` } }
})

const chat = (endpoint: Compute.PrivateEndpoint) =>
  Effect.promise(async () => {
    const response = await fetch(`${endpoint.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${endpoint.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: "hello" }] })
    })
    return { status: response.status, body: (await response.json()) as { choices: Array<{ message: { content: string } }> } }
  })

/** The contract's tests, in the calling `describe`; `subject` is read when each test runs. */
export const computeContract = (subject: () => ContractSubject, timeoutMs: number) => {
  const spec = (agentId: string, key: string, extra: Partial<Compute.GatewaySpec> = {}): Compute.GatewaySpec => ({
    namespaceId: subject().namespace.id,
    agentId,
    revisionId: "rev_contract",
    values: values(subject().fake),
    env: { FAKE_MODEL_KEY: Redacted.make(key) },
    ...extra
  })

  it.live("starts a healthy gateway, re-adopts it after a restart, stops and deletes it", () =>
    Effect.gen(function* () {
      const { driver, restarted, fake } = subject()
      const ref = { namespaceId: subject().namespace.id, agentId: "agt_contract", revisionId: "rev_contract" }
      expect(yield* driver.gatewayHealth(ref)).toBe("absent")
      yield* driver.startGateway(spec("agt_contract", CONTRACT_KEY, { modelProbe: {} }))
      expect(yield* driver.gatewayHealth(ref)).toBe("healthy")
      const endpoint = yield* driver.privateEndpoint(ref)
      const answer = yield* chat(endpoint)
      expect(answer.status).toBe(200)
      expect(answer.body.choices[0]!.message.content).toBe(fake.reply)
      expect(yield* driver.liveGateways).toContainEqual(ref)
      expect((yield* driver.diagnostics(ref)).every((check) => check.status === "pass")).toBe(true)

      const again = restarted()
      yield* again.startGateway(spec("agt_contract", CONTRACT_KEY))
      expect(yield* again.privateEndpoint(ref)).toEqual(endpoint)

      yield* again.stopGateway(ref)
      expect(yield* again.gatewayHealth(ref)).toBe("stopped")
      expect(yield* again.liveGateways).not.toContainEqual(ref)
      expect(yield* Effect.flip(again.privateEndpoint(ref))).toMatchObject({ _tag: "ComputeFailure", code: "GATEWAY_NOT_RUNNING", permanent: false })
      yield* again.stopGateway(ref)

      yield* again.deleteGateway(ref)
      expect(yield* again.gatewayHealth(ref)).toBe("absent")
      yield* again.deleteGateway(ref)
    }), timeoutMs)

  it.live("a credential the model provider rejects fails permanently with RUNTIME_AUTHENTICATION_FAILED and stops the gateway", () =>
    Effect.gen(function* () {
      const { driver } = subject()
      const ref = { namespaceId: subject().namespace.id, agentId: "agt_rejected", revisionId: "rev_contract" }
      const failure = yield* Effect.flip(driver.startGateway(spec("agt_rejected", "sk-wrong", { modelProbe: {} })))
      expect(failure).toMatchObject({ _tag: "ComputeFailure", code: "RUNTIME_AUTHENTICATION_FAILED", permanent: true })
      expect(yield* driver.gatewayHealth(ref)).toBe("stopped")
      yield* driver.deleteGateway(ref)
    }), timeoutMs)

  it.live("refuses reserved variable names permanently, and a Namespace not provisioned yet transiently", () =>
    Effect.gen(function* () {
      const { driver } = subject()
      expect(yield* Effect.flip(driver.startGateway(spec("agt_invalid", CONTRACT_KEY, { env: { OPENCLAW_STATE_DIR: Redacted.make("x") } }))))
        .toMatchObject({ _tag: "ComputeFailure", code: "GATEWAY_SPEC_INVALID", permanent: true })
      expect(yield* Effect.flip(driver.startGateway({ ...spec("agt_invalid", CONTRACT_KEY), namespaceId: NamespaceId.make() })))
        .toMatchObject({ _tag: "ComputeFailure", code: "NAMESPACE_RUNTIME_MISSING", permanent: false })
    }), timeoutMs)
}
