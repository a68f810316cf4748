/**
 * An Agent ready to deploy without a gateway, set up as an operator would: a Secret, a
 * Configuration of kind `agent`, an `api_key` Agent reading the Secret, and the AccessBinding
 * that lets the Agent's own principal use it (SPEC 2.5). `call` is relative to the Namespace.
 */
import { SqlClient } from "@effect/sql"
import { RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole } from "../../../../testing/identity.js"
import { expectData, type Result } from "./iamServer.js"

export const setUpDeployableAgent = (
  ns: string,
  call: (method: string, path: string, body?: unknown) => Effect.Effect<Result>,
  values: Record<string, unknown> = { agents: {} }
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const secret = expectData(yield* call("POST", "secrets", { name: "model-key", value: "sk-deployable-key" }), 201)
    const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values }), 201)
    const agent = expectData(yield* call("POST", "agents", {
      name: "bot",
      configurationId: configuration.id,
      harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secret.id } }
    }), 201)
    const role = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, ${`operate-${role}`}, ARRAY['secret:operate'])`
    const principalBinding = yield* bindRole(agent.servicePrincipalId, role, { kind: "secret", id: secret.id, namespaceId: ns })
    return { secret, configuration, agent, role, principalBinding }
  })
