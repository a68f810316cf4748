/**
 * The routes the bad-input fuzz test (bad-input-fuzz.test.ts) attacks: each create and update
 * route of the tenancy capability, of Agents (their repository fields and settings included), of
 * Agent provisioning, of service accounts and of credential sources, with a valid body, its
 * fields' kinds, and a snapshot of what it may write.
 */
import { SqlClient } from "@effect/sql"
import { RequestId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../../testing/server.js"
import { type Target, tableSnapshot } from "./fuzzBodies.js"
import {
  approversField,
  backendIdField,
  executionModeField,
  harnessAuthField,
  pluginsField,
  secretRefField,
  sourceConfigField,
  sourceSecretsField,
  sourceTypeField
} from "./fuzzFields.js"
import { expectData, seedAdmin, seedNamespace, send } from "./iamServer.js"

/** A Namespace with a Secret, a Configuration, a Preset and an Agent, and every route to attack. */
export const fuzzTargets = Effect.gen(function* () {
  const { baseUrl } = yield* TestServer
  const admin = yield* seedAdmin("fuzz-admin@example.com")
  const ns = yield* seedNamespace("fuzz")
  const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "fuzz-secret", value: "v" }), 201)
  const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
  const audit = (sql: SqlClient.SqlClient) => sql<{ row: string }>`SELECT count(*)::text AS row FROM audit_events WHERE outcome = 'success'`
  const namespaces = tableSnapshot((sql) => Effect.zipWith(
    sql<{ row: string }>`SELECT row_to_json(n)::text AS row FROM namespaces n ORDER BY id`,
    Effect.zipWith(sql<{ row: string }>`SELECT count(*)::text AS row FROM work_items`, audit(sql), (a, b) => [...a, ...b]),
    (a, b) => [...a, ...b]
  ))
  const secrets = tableSnapshot((sql) => Effect.zipWith(
    sql<{ row: string }>`SELECT row_to_json(s)::text AS row FROM secrets s ORDER BY id`,
    audit(sql),
    (a, b) => [...a, ...b]
  ))
  const configurations = tableSnapshot((sql) => Effect.zipWith(
    sql<{ row: string }>`SELECT row_to_json(c)::text AS row FROM configurations c ORDER BY id`,
    Effect.zipWith(sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM configuration_secret_refs r ORDER BY configuration_id, secret_id`, audit(sql), (a, b) => [...a, ...b]),
    (a, b) => [...a, ...b]
  ))
  const preset = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, admin.headers, { name: "fuzz-preset", template: {} }), 201)
  const presets = tableSnapshot((sql) => Effect.zipWith(
    sql<{ row: string }>`SELECT row_to_json(p)::text AS row FROM presets p ORDER BY id`,
    audit(sql),
    (a, b) => [...a, ...b]
  ))
  const provisioning = tableSnapshot((sql) => Effect.zipWith(
    sql<{ row: string }>`SELECT row_to_json(p)::text AS row FROM agent_provisioning p ORDER BY id`,
    Effect.zipWith(sql<{ row: string }>`SELECT count(*)::text AS row FROM work_items`, audit(sql), (a, b) => [...a, ...b]),
    (a, b) => [...a, ...b]
  ))
  const harnessAuth = harnessAuthField(ns, secret.id)
  /** The Agent settings create, update and provisioning share (SPEC 2.4, 2.5, 2.9). */
  const settings = { executionMode: executionModeField, backendId: backendIdField, harnessAuth, plugins: pluginsField }
  const bindings = { KEY: { source: { kind: "secret", namespaceId: ns, id: secret.id } } }
  const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents`, admin.headers, { name: "fuzz-agent", configurationId: configuration.id }), 201)
  const agents = tableSnapshot((sql) => Effect.zipWith(
    sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM agents a ORDER BY id`,
    Effect.zipWith(sql<{ row: string }>`SELECT count(*)::text AS row FROM principals`, audit(sql), (a, b) => [...a, ...b]),
    (a, b) => [...a, ...b]
  ))
  const targets: ReadonlyArray<Target> = [
    {
      route: "POST /namespaces",
      method: "POST",
      path: "/namespaces",
      valid: { name: "fuzz-namespace" },
      fields: { name: "name", existingNamespace: "name" },
      required: ["name"],
      snapshot: namespaces
    },
    {
      route: "POST /namespaces/:namespaceId/secrets",
      method: "POST",
      path: `/namespaces/${ns}/secrets`,
      valid: { name: "fuzz-new", value: "v" },
      fields: { name: "name", value: "secretValue" },
      required: ["name", "value"],
      snapshot: secrets
    },
    {
      route: "PATCH /namespaces/:namespaceId/secrets/:secretId",
      method: "PATCH",
      path: `/namespaces/${ns}/secrets/${secret.id}`,
      valid: { value: "w" },
      fields: { value: "secretValue" },
      required: ["value"],
      snapshot: secrets
    },
    {
      route: "POST /namespaces/:namespaceId/configurations",
      method: "POST",
      path: `/namespaces/${ns}/configurations`,
      valid: { kind: "agent", values: { a: 1 }, secretBindings: bindings },
      fields: { kind: "enum", values: "object", secretBindings: "bindings" },
      required: ["kind", "values"],
      snapshot: configurations
    },
    {
      route: "PATCH /namespaces/:namespaceId/configurations/:configurationId",
      method: "PATCH",
      path: `/namespaces/${ns}/configurations/${configuration.id}`,
      valid: { values: { a: 2 }, secretBindings: bindings },
      fields: { values: "object", secretBindings: "bindings" },
      required: ["values"],
      snapshot: configurations
    },
    {
      route: "POST /namespaces/:namespaceId/presets",
      method: "POST",
      path: `/namespaces/${ns}/presets`,
      valid: { name: "fuzz-new-preset", template: { variables: { who: { type: "string" } }, configuration: { values: { greeting: "{{ vars.who }}" } } } },
      fields: { name: "name", template: "template" },
      required: ["name", "template"],
      snapshot: presets
    },
    {
      route: "PATCH /namespaces/:namespaceId/presets/:presetId",
      method: "PATCH",
      path: `/namespaces/${ns}/presets/${preset.id}`,
      valid: { name: "fuzz-renamed" },
      fields: { name: "name", template: "template" },
      required: [],
      snapshot: presets
    },
    {
      route: "POST /namespaces/:namespaceId/agents",
      method: "POST",
      path: `/namespaces/${ns}/agents`,
      valid: { name: "fuzz-new-agent", configurationId: configuration.id, harnessAuth: { method: "runtime" } },
      fields: {
        name: "name",
        configurationId: "reference",
        ...settings,
        pluginApprovers: approversField(false),
        repositoryBindings: "repositoryList",
        repositoryAccess: "repositoryAccess"
      },
      required: ["name", "configurationId"],
      snapshot: agents
    },
    {
      route: "PATCH /namespaces/:namespaceId/agents/:agentId",
      method: "PATCH",
      path: `/namespaces/${ns}/agents/${agent.id}`,
      valid: { configurationId: configuration.id, harnessAuth: null },
      fields: {
        configurationId: "reference",
        ...settings,
        pluginApprovers: approversField(true),
        repositoryBindings: "repositoryList",
        repositoryAccess: "repositoryAccess"
      },
      required: ["configurationId"],
      snapshot: agents
    },
    {
      route: "POST /namespaces/:namespaceId/agents/provision",
      method: "POST",
      path: `/namespaces/${ns}/agents/provision`,
      valid: { requestId: RequestId.make(), name: "fuzz-agent", configuration: { kind: "agent", values: { a: 1 }, secretBindings: bindings } },
      fields: {
        requestId: "enum",
        name: "name",
        configuration: "object",
        ...settings,
        pluginApprovers: approversField(false),
        repositoryBindings: "repositoryList"
      },
      required: ["requestId", "name"],
      snapshot: provisioning
    },
    // --- service accounts (issue 13) ---
    ...(yield* Effect.gen(function* () {
      const accounts = tableSnapshot((sql) => Effect.zipWith(
        sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM service_accounts a ORDER BY id`,
        Effect.zipWith(sql<{ row: string }>`SELECT count(*)::text AS row FROM service_account_credentials`, audit(sql), (a, b) => [...a, ...b]),
        (a, b) => [...a, ...b]
      ))
      const account = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/service-accounts`, admin.headers, { name: "fuzz-account" }), 201)
      const targets: ReadonlyArray<Target> = [
        {
          route: "POST /namespaces/:namespaceId/service-accounts",
          method: "POST",
          path: `/namespaces/${ns}/service-accounts`,
          valid: { name: "fuzz-account" },
          fields: { name: "name" },
          required: ["name"],
          snapshot: accounts
        },
        {
          route: "PATCH /namespaces/:namespaceId/service-accounts/:serviceAccountId/credential",
          method: "PATCH",
          path: `/namespaces/${ns}/service-accounts/${account.id}/credential`,
          valid: { kind: "api_key", secretRef: { name: "fuzz-secret", key: "value" } },
          fields: { kind: "enum", secretRef: secretRefField("fuzz-secret") },
          required: ["kind", "secretRef"],
          snapshot: accounts
        },
        {
          // `{}` is the one valid body, and without a ServiceAccount Driver (none is selected here)
          // its answer is the specified 503 DEPENDENCY_UNAVAILABLE: only refused bodies are sent.
          route: "POST /namespaces/:namespaceId/service-accounts/:serviceAccountId/credentials",
          method: "POST",
          path: `/namespaces/${ns}/service-accounts/${account.id}/credentials`,
          valid: {},
          fields: {},
          required: [],
          snapshot: accounts,
          shapedBodies: false
        }
      ]
      return targets
    })),
    // --- end service accounts ---
    // credential-sources (SPEC 4.6): no gateway is selected here, and shaped bodies never
    // name a catalog type, so every answer is decided before a Secret or gateway is reached.
    {
      route: "POST /namespaces/:namespaceId/credential-sources",
      method: "POST",
      path: `/namespaces/${ns}/credential-sources`,
      valid: { name: "fuzz-source", type: "modelvendor", secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } } },
      fields: { name: "name", type: sourceTypeField, config: sourceConfigField, secrets: sourceSecretsField(ns, secret.id) },
      required: ["name", "type"],
      snapshot: tableSnapshot((sql) => Effect.zipWith(
        sql<{ row: string }>`SELECT row_to_json(c)::text AS row FROM credential_sources c ORDER BY id`,
        Effect.zipWith(sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM credential_source_secret_refs r ORDER BY source_id`, audit(sql), (a, b) => [...a, ...b]),
        (a, b) => [...a, ...b]
      ))
    },
    // end credential-sources
    // plugins (issue 13): read-only routes; a refused body changes no Agent either.
    {
      route: "POST /namespaces/:namespaceId/agents/plugins",
      method: "POST",
      path: `/namespaces/${ns}/agents/plugins`,
      valid: { q: "search", cursor: "bundled:a" },
      fields: { q: "enum", cursor: "reference" },
      required: [],
      snapshot: agents
    },
    {
      route: "POST /namespaces/:namespaceId/agents/plugins/details",
      method: "POST",
      path: `/namespaces/${ns}/agents/plugins/details`,
      valid: { pluginId: "bundled:zalo" },
      fields: { pluginId: "reference" },
      required: ["pluginId"],
      snapshot: agents
    }
    // end plugins
  ]
  return { baseUrl, admin, ns, targets }
})
