/**
 * Who may aim an Agent's model credential (SPEC 2.5, 2.8, 4.3, 4.4; docs/decisions/configurations.md
 * "Model-credential endpoints"), over the real API and database: a Configuration PATCH or an Agent
 * PATCH that could send a bound credential to a new endpoint needs the grant that binds it, is 403
 * without it and changes nothing, and goes through with it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { auditKinds, expectData, expectError, type Headers, seedAdmin, send, withKey } from "./support/iamServer.js"
import { binding, managedApiLayer, roleWith, world } from "./support/serviceAccountWorld.js"

const PROVIDER = "https://models.example/v1"
const COLLECTOR = "https://collector.example/v1"

const withProvider = (baseUrl: string, extra: Record<string, unknown> = {}) =>
  ({ models: { providers: { vendor: { baseUrl, api: "openai-completions", models: [] } } }, ...extra })

/** A service key holding `permissions` in the Namespace and, optionally, grants on exact resources. */
const keyWith = (ns: string, permissions: ReadonlyArray<string>, exact: ReadonlyArray<{ kind: string; id: string; permissions: ReadonlyArray<string> }> = []) =>
  Effect.gen(function* () {
    const principal = yield* createServicePrincipal(`editor-${crypto.randomUUID()}`, ns)
    yield* bindRole(principal, yield* roleWith(ns, ...permissions), { kind: "namespace", id: ns })
    for (const grant of exact) {
      yield* bindRole(principal, yield* roleWith(ns, ...grant.permissions), { kind: grant.kind, id: grant.id, namespaceId: ns })
    }
    return withKey((yield* insertServiceKey(principal, { namespaceId: ns })).key)
  })

const EDITOR = ["namespace:read", "configuration:create", "configuration:read", "configuration:update", "agent:read", "agent:update"]

/**
 * A Namespace with one Configuration per credential-bearing binding, each taken by one Agent, and
 * two callers who may change both: `editor` holds no grant on the credentials, `binder` holds
 * exactly the ones that bind them.
 */
const setUp = (baseUrl: string, admin: Headers, name: string) =>
  Effect.gen(function* () {
    const w = yield* world(baseUrl, admin, name)
    const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${w.ns}/secrets`, admin, { name: "model-token", value: "model-token-value" }), 201)
    const source = { kind: "secret", namespaceId: w.ns, id: secret.id }
    const bindings = {
      api_key: { executionMode: "dedicated", harnessAuth: { method: "api_key", source } },
      direct_token: { executionMode: "dedicated", harnessAuth: { method: "direct_token", source } },
      provider_service_account: { executionMode: "dedicated", backendId: "accounts-main", harnessAuth: binding(w.ready) }
    }
    const agents: Array<{ method: string; configurationId: string; agentId: string }> = []
    for (const [method, fields] of Object.entries(bindings)) {
      const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${w.ns}/configurations`, admin, { kind: "agent", values: withProvider(PROVIDER) }), 201)
      const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${w.ns}/agents`, admin, { name: method, configurationId: configuration.id, ...fields }), 201)
      agents.push({ method, configurationId: configuration.id, agentId: agent.id })
    }
    const editor = yield* keyWith(w.ns, EDITOR)
    const binder = yield* keyWith(w.ns, EDITOR, [
      { kind: "secret", id: secret.id, permissions: ["secret:read", "secret:operate"] },
      { kind: "service_account", id: w.ready, permissions: ["service_account:read"] }
    ])
    return { ns: w.ns, unused: w.configurationId, agents, editor, binder }
  })

describe("redirecting an Agent's model credential needs the grant that binds it (SPEC 2.5, 2.8)", () => {
  it.layer(managedApiLayer("kubernetes"), { timeout: 120_000 })((it) => {
    it.effect("a Configuration PATCH that adds a model endpoint, or every PATCH under api_key, is 403 without the grant and changes nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("redirect-configuration@example.com")
        const s = yield* setUp(baseUrl, admin.headers, "redirect-configuration")
        const patch = (headers: Headers, configurationId: string, values: unknown) =>
          send(baseUrl, "PATCH", `/namespaces/${s.ns}/configurations/${configurationId}`, headers, { values })
        const read = (configurationId: string) => send(baseUrl, "GET", `/namespaces/${s.ns}/configurations/${configurationId}`, admin.headers)

        // A Configuration no Agent takes binds no credential: anyone who may update it may.
        expect(expectData(yield* patch(s.editor, s.unused, withProvider(COLLECTOR)), 200).generation).toBe(2)

        for (const { method, configurationId } of s.agents) {
          const refused = yield* patch(s.editor, configurationId, withProvider(COLLECTOR))
          expectError(refused, 403, "FORBIDDEN")
          expect(refused.text, method).not.toContain("model-token-value")
          expect(expectData(yield* read(configurationId), 200), method).toMatchObject({ generation: 1, values: withProvider(PROVIDER) })
          expect((yield* auditKinds(configurationId)).map((row) => row.kind), method).toEqual(["configuration.created"])
        }

        // Keeping the endpoints is free where only the harness holds the credential...
        const kept = withProvider(PROVIDER, { ui: { seamColor: "#336699" } })
        for (const { method, configurationId } of s.agents.filter((a) => a.method !== "api_key")) {
          expect(expectData(yield* patch(s.editor, configurationId, kept), 200).generation, method).toBe(2)
        }
        // ...but an api_key Secret sits in the gateway's environment, where every value can reach it.
        const apiKey = s.agents.find((a) => a.method === "api_key")!
        expectError(yield* patch(s.editor, apiKey.configurationId, kept), 403, "FORBIDDEN")
        expect(expectData(yield* read(apiKey.configurationId), 200)).toMatchObject({ generation: 1, values: withProvider(PROVIDER) })

        // Whoever may bind the credential may also aim it.
        for (const { method, configurationId } of s.agents) {
          const updated = expectData(yield* patch(s.binder, configurationId, withProvider(COLLECTOR)), 200)
          expect(updated.values, method).toEqual(withProvider(COLLECTOR))
        }
      }))

    it.effect("an Agent PATCH that moves a kept credential to a Configuration with a new endpoint is 403 without the grant and changes nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("redirect-agent@example.com")
        const s = yield* setUp(baseUrl, admin.headers, "redirect-agent")
        const configuration = (values: unknown) =>
          Effect.map(send(baseUrl, "POST", `/namespaces/${s.ns}/configurations`, s.editor, { kind: "agent", values }), (r) => expectData(r, 201).id as string)
        const elsewhere = yield* configuration(withProvider(COLLECTOR))
        const same = yield* configuration(withProvider(PROVIDER, { ui: { seamColor: "#336699" } }))
        const patch = (headers: Headers, agentId: string, configurationId: string) =>
          send(baseUrl, "PATCH", `/namespaces/${s.ns}/agents/${agentId}`, headers, { configurationId })
        const read = (agentId: string) => send(baseUrl, "GET", `/namespaces/${s.ns}/agents/${agentId}`, admin.headers)

        for (const { method, agentId, configurationId } of s.agents) {
          expectError(yield* patch(s.editor, agentId, elsewhere), 403, "FORBIDDEN")
          expect(expectData(yield* read(agentId), 200).configurationId, method).toBe(configurationId)
          expect((yield* auditKinds(agentId)).map((row) => row.kind), method).toEqual(["agent.created"])
        }
        // The same endpoints under another Configuration: free unless the gateway holds the credential.
        for (const { method, agentId } of s.agents) {
          const moved = yield* patch(s.editor, agentId, same)
          if (method === "api_key") expectError(moved, 403, "FORBIDDEN")
          else expect(expectData(moved, 200).configurationId, method).toBe(same)
        }
        for (const { method, agentId } of s.agents) {
          expect(expectData(yield* patch(s.binder, agentId, elsewhere), 200).configurationId, method).toBe(elsewhere)
        }
      }))
  })
})
