/**
 * The set-up the real-gateway tests share, done through the public API as an operator would: a
 * ready Namespace, the model key as a Secret, a Configuration whose provider is the fake model
 * server (its key read from MODEL_API_KEY), an `api_key` Agent, and the AccessBinding that lets
 * the Agent's own principal use the key (SPEC 2.5).
 */
import { Effect } from "effect"
import type { FakeModelServer } from "../../../../testing/fakeModelServer.js"
import { until } from "../../../../testing/poll.js"
import { expectData, type Result } from "./iamServer.js"

export type Call = (method: string, path: string, body?: unknown) => Effect.Effect<Result>

/** Configuration `values`: the fake model server as the default model. */
export const fakeModelValues = (fake: FakeModelServer, label = "Fake") => ({
  models: {
    providers: {
      fake: {
        baseUrl: fake.baseUrl,
        api: "openai-completions",
        apiKey: { source: "env", provider: "default", id: "MODEL_API_KEY" },
        models: [{ id: fake.model, name: label }]
      }
    }
  },
  agents: { defaults: { model: `fake/${fake.model}` } }
})

export interface ModelAgentOptions {
  readonly namespace: string
  readonly agent: string
  readonly modelKey: string
  readonly fake: FakeModelServer
  readonly initialWorkspaceFiles?: Readonly<Record<string, string>>
}

/** A role with `secret:operate` bound to the Agent's own principal on one Secret (SPEC 2.5). */
export const letAgentUseSecret = (
  call: Call,
  options: { readonly ns: string; readonly agent: { readonly servicePrincipalId: string }; readonly secretId: string; readonly roleName: string }
) =>
  Effect.gen(function* () {
    const { ns, agent, secretId, roleName } = options
    const role = expectData(yield* call("POST", `/namespaces/${ns}/iam/roles`, { name: roleName, permissions: ["secret:operate"] }), 201)
    expectData(yield* call("POST", `/namespaces/${ns}/iam/access-bindings`, {
      principalId: agent.servicePrincipalId,
      roleId: role.id,
      resource: { kind: "secret", id: secretId }
    }), 201)
  })

export const setUpModelAgent = (call: Call, options: ModelAgentOptions) =>
  Effect.gen(function* () {
    const ns = expectData(yield* call("POST", "/namespaces", { name: options.namespace }), 201).id as string
    yield* until(call("GET", `/namespaces/${ns}`), (r) => r.body.data?.status === "ready", 60)
    const secret = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "model-key", value: options.modelKey }), 201)
    const configuration = expectData(yield* call("POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: fakeModelValues(options.fake) }), 201)
    const agent = expectData(yield* call("POST", `/namespaces/${ns}/agents`, {
      name: options.agent,
      configurationId: configuration.id,
      harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secret.id } },
      ...(options.initialWorkspaceFiles === undefined ? {} : { initialWorkspaceFiles: options.initialWorkspaceFiles })
    }), 201)
    yield* letAgentUseSecret(call, { ns, agent, secretId: secret.id, roleName: "use-model-key" })
    return { ns, secret, configuration, agent, agentPath: `/namespaces/${ns}/agents/${agent.id}` }
  })
