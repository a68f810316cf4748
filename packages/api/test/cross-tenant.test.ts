/**
 * Cross-tenant isolation (SPEC 1.2): principals of Namespace A — a human Namespace
 * administrator, a Namespace-scoped service key and an Installation-scoped service principal
 * bound only inside A — against everything in Namespace B. Every Namespace route of SvcApi is
 * found with HttpApi.reflect, so a new route is covered the moment it is added (a route whose
 * path parameter has no fixture here fails the test). For each route and caller:
 * - the answer is 403 or 404, never success;
 * - it is the same status and code whether B's resource exists or not, so nothing confirms
 *   that it exists;
 * - nothing in B changed.
 * Then the ways to reach B from inside A: binding B's resources in A's Configurations and
 * AccessBindings, and listing.
 */
import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Authentication, SvcApi } from "@svc/core/api"
import { BuiltinRoles } from "@svc/core/iam"
import { AgentId, BindingId, ConfigurationId, CredentialSourceId, NamespaceId, PresetId, RequestId, RevisionId, RoleId, SecretId, ServiceAccountId, ServicePrincipalId, WorkId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  apiTestLayer,
  expectData,
  expectError,
  type Headers,
  type Result,
  seedAdmin,
  seedHuman,
  seedNamespace,
  send,
  withKey
} from "./support/iamServer.js"

interface NamespaceRoute {
  readonly method: string
  readonly path: string
}

/** Every protected route under /namespaces/:namespaceId. */
const namespaceRoutes = (): Array<NamespaceRoute> => {
  const found: Array<NamespaceRoute> = []
  HttpApi.reflect(SvcApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if (endpoint.path.startsWith("/namespaces/:namespaceId") && [...middleware].some((tag) => tag.key === Authentication.key)) {
        found.push({ method: endpoint.method, path: endpoint.path })
      }
    }
  })
  return found
}

/** Ids that exist nowhere, by path parameter. */
const absentIds: Record<string, () => string> = {
  namespaceId: () => NamespaceId.make(),
  secretId: () => SecretId.make(),
  configurationId: () => ConfigurationId.make(),
  presetId: () => PresetId.make(),
  roleId: () => RoleId.make(),
  bindingId: () => BindingId.make(),
  servicePrincipalId: () => ServicePrincipalId.make(),
  agentId: () => AgentId.make(),
  revisionId: () => RevisionId.make(),
  deploymentId: () => RevisionId.make(),
  name: () => "USER.md",
  workId: () => WorkId.make(),
  serviceAccountId: () => ServiceAccountId.make(), // service accounts (issue 13)
  // credential-sources
  credentialSourceId: () => CredentialSourceId.make()
}

/** Every row of Namespace B, and of the Installation-wide tables B's resources live in. */
const snapshotOf = (ns: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ row: string }>`
      SELECT row_to_json(n)::text AS row FROM namespaces n WHERE id = ${ns}
      UNION ALL SELECT row_to_json(s)::text FROM secrets s WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(c)::text FROM configurations c WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(r)::text FROM roles r WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(b)::text FROM access_bindings b WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(p)::text FROM principals p WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(a)::text FROM agents a WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(v)::text FROM agent_revisions v WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(w)::text FROM agent_provisioning w WHERE namespace_id = ${ns}
      UNION ALL SELECT row_to_json(sa)::text FROM service_accounts sa WHERE namespace_id = ${ns} -- service accounts (issue 13)
      UNION ALL SELECT count(*)::text FROM work_items WHERE key = ${ns} OR payload->>'namespaceId' = ${ns}
      UNION ALL SELECT row_to_json(cs)::text FROM credential_sources cs WHERE namespace_id = ${ns}
      ORDER BY 1
    `
    const presets = yield* sql<{ row: string }>`SELECT row_to_json(p)::text AS row FROM presets p WHERE namespace_id = ${ns} ORDER BY 1`
    return [...rows, ...presets].map((r) => r.row)
  })

describe("cross-tenant isolation", () => {
  it.layer(apiTestLayer(), { timeout: 300_000 })((it) => {
    it.effect("principals of Namespace A can neither see, change nor confirm anything in Namespace B", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("tenant-admin@example.com")
        const a = yield* seedNamespace("tenant-a")
        const b = yield* seedNamespace("tenant-b")
        const asAdmin = (method: string, path: string, body?: unknown) => send(baseUrl, method, path, admin.headers, body)

        // Namespace B's resources, one of each kind.
        const secret = expectData(yield* asAdmin("POST", `/namespaces/${b}/secrets`, { name: "b-secret", value: "b-value" }), 201)
        const configuration = expectData(yield* asAdmin("POST", `/namespaces/${b}/configurations`, {
          kind: "agent",
          values: { owner: "b" },
          secretBindings: { B_KEY: { source: { kind: "secret", namespaceId: b, id: secret.id } } }
        }), 201)
        const role = expectData(yield* asAdmin("POST", `/namespaces/${b}/iam/roles`, { name: "b-role", permissions: ["secret:read"] }), 201)
        const bPrincipal = expectData(yield* asAdmin("POST", `/namespaces/${b}/iam/service-principals`, { name: "b-automation" }), 201)
        const binding = expectData(yield* asAdmin("POST", `/namespaces/${b}/iam/access-bindings`, {
          principalId: bPrincipal.id,
          roleId: role.id,
          resource: { kind: "secret", id: secret.id }
        }), 201)
        const preset = expectData(yield* asAdmin("POST", `/namespaces/${b}/presets`, { name: "b-preset", template: {} }), 201)
        const plain = expectData(yield* asAdmin("POST", `/namespaces/${b}/configurations`, { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* asAdmin("POST", `/namespaces/${b}/agents`, {
          name: "b-agent",
          configurationId: plain.id,
          harnessAuth: { method: "runtime" }
        }), 201)
        const revision = expectData(yield* asAdmin("POST", `/namespaces/${b}/agents/${agent.id}/deploy`), 202)
        const provisioning = expectData(yield* asAdmin("POST", `/namespaces/${b}/agents/provision`, {
          requestId: RequestId.make(),
          name: "b-provisioned",
          configuration: { kind: "agent", values: {} }
        }), 202).provisioning
        // credential-sources: B's source (this Installation has no gateway, so it is a row).
        const bSource = CredentialSourceId.make()
        yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state) VALUES (${bSource}, ${b}, 'b-source', 'modelvendor', 'ready')`
        yield* sql`INSERT INTO credential_source_secret_refs (source_id, field, secret_id) VALUES (${bSource}, 'api_key', ${secret.id})`
        // end credential-sources
        const existing: Record<string, string> = {
          credentialSourceId: bSource,
          namespaceId: b,
          secretId: secret.id,
          configurationId: configuration.id,
          roleId: role.id,
          bindingId: binding.id,
          servicePrincipalId: bPrincipal.id,
          presetId: preset.id,
          agentId: agent.id,
          revisionId: revision.id,
          deploymentId: revision.id,
          name: "USER.md",
          workId: provisioning.id,
          // service accounts (issue 13)
          serviceAccountId: expectData(yield* asAdmin("POST", `/namespaces/${b}/service-accounts`, { name: "b-account" }), 201).id
        }

        // The callers of Namespace A, each an administrator there.
        const human = yield* seedHuman("tenant-a-admin@example.com")
        yield* bindRole(human.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: a })
        const scoped = yield* createServicePrincipal("a-automation", a)
        yield* bindRole(scoped, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: a })
        const scopedKey = withKey((yield* insertServiceKey(scoped, { namespaceId: a })).key)
        const wide = yield* createServicePrincipal("a-installation-automation")
        yield* bindRole(wide, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: a })
        const wideKey = withKey((yield* insertServiceKey(wide)).key)
        const callers: Record<string, Headers> = { human: human.headers, namespaceKey: scopedKey, installationKey: wideKey }

        // Valid bodies, so no answer is a mere 400 in front of the authorization.
        const bodies: Record<string, unknown> = {
          "POST /namespaces/:namespaceId/secrets": { name: "planted", value: "x" },
          "PATCH /namespaces/:namespaceId/secrets/:secretId": { value: "overwritten" },
          "POST /namespaces/:namespaceId/configurations": { kind: "agent", values: {} },
          "PATCH /namespaces/:namespaceId/configurations/:configurationId": { values: { owner: "a" } },
          "POST /namespaces/:namespaceId/iam/roles": { name: "planted", permissions: ["secret:read"] },
          "POST /namespaces/:namespaceId/iam/access-bindings": {
            principalId: human.principalId,
            roleId: BuiltinRoles.namespaceAdmin.id,
            resource: { kind: "namespace", id: b }
          },
          "POST /namespaces/:namespaceId/iam/service-principals": { name: "planted" },
          "POST /namespaces/:namespaceId/presets": { name: "planted", template: {} },
          "PATCH /namespaces/:namespaceId/presets/:presetId": { name: "renamed" },
          "POST /namespaces/:namespaceId/agents": { name: "planted", configurationId: configuration.id },
          "PATCH /namespaces/:namespaceId/agents/:agentId": { configurationId: configuration.id, harnessAuth: null },
          // Bodyless operations.
          "POST /namespaces/:namespaceId/agents/:agentId/deploy": null,
          "POST /namespaces/:namespaceId/agents/:agentId/stop": null,
          "POST /namespaces/:namespaceId/agents/:agentId/revisions/:revisionId/redeploy": null,
          "POST /namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/diagnostics": null,
          "PUT /namespaces/:namespaceId/agents/:agentId/workspace/files/:name": { content: "planted" },
          "POST /namespaces/:namespaceId/agents/provision": {
            requestId: RequestId.make(),
            name: "planted",
            configuration: { kind: "agent", values: {}, secretBindings: { B_KEY: { source: { kind: "secret", namespaceId: b, id: secret.id } } } }
          },
          "POST /namespaces/:namespaceId/agents/provision/:workId/retry": null,
          // --- service accounts (issue 13) ---
          "POST /namespaces/:namespaceId/service-accounts": { name: "planted" },
          "POST /namespaces/:namespaceId/service-accounts/:serviceAccountId/credentials": {},
          "PATCH /namespaces/:namespaceId/service-accounts/:serviceAccountId/credential": { kind: "api_key", secretRef: { name: "b-secret", key: "value" } },
          // --- end service accounts ---
          // credential-sources
          "POST /namespaces/:namespaceId/credential-sources": {
            name: "planted",
            type: "modelvendor",
            secrets: { api_key: { kind: "secret", namespaceId: b, id: secret.id } }
          },
          // plugins (issue 13)
          "POST /namespaces/:namespaceId/agents/plugins": {},
          "POST /namespaces/:namespaceId/agents/plugins/details": { pluginId: "bundled:zalo" }
          // end plugins
        }

        const before = yield* snapshotOf(b)
        const routes = namespaceRoutes()
        expect(routes.length).toBeGreaterThanOrEqual(20)
        for (const route of routes) {
          const key = `${route.method} ${route.path}`
          const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!)
          for (const param of params) {
            expect(absentIds[param], `no fixture for path parameter ${param} (${key})`).toBeDefined()
            expect(existing[param], `no resource of Namespace B for ${param} (${key})`).toBeDefined()
          }
          const mutating = route.method === "POST" || route.method === "PATCH" || route.method === "PUT"
          if (mutating) expect(key in bodies, `no body for ${key}`).toBe(true)
          const body = mutating ? bodies[key] ?? undefined : undefined
          const pathWith = (ids: Record<string, string>) => route.path.replace(/:([A-Za-z]+)/g, (_m, name: string) => ids[name]!)
          const absent = Object.fromEntries(params.map((param) => [param, absentIds[param]!()]))
          for (const [caller, headers] of Object.entries(callers)) {
            const real: Result = yield* send(baseUrl, route.method, pathWith(existing), headers, body)
            const ghost: Result = yield* send(baseUrl, route.method, pathWith(absent), headers, body)
            const label = `${caller} ${key}`
            expect([403, 404], `${label}: ${real.text}`).toContain(real.status)
            expect({ status: ghost.status, code: ghost.body?.error?.code }, `${label}: existing and absent answer alike`).toEqual({
              status: real.status,
              code: real.body?.error?.code
            })
            // A Namespace-scoped key is out of scope everywhere in B: always 403, never a 404 that maps B.
            if (caller === "namespaceKey") expect(real.status, label).toBe(403)
          }
        }
        expect(yield* snapshotOf(b)).toEqual(before)

        // A's own path with B's resource ids: A's callers pass A's Namespace authorization, so only
        // lookups scoped to A stand between them and B's resources. Every answer is a refusal and
        // the same as for ids that exist nowhere.
        for (const route of routes) {
          const key = `${route.method} ${route.path}`
          const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!).filter((param) => param !== "namespaceId")
          if (params.length === 0) continue
          const mutating = route.method === "POST" || route.method === "PATCH" || route.method === "PUT"
          const body = mutating ? bodies[key] ?? undefined : undefined
          const inA = (ids: Record<string, string>) => route.path.replace(/:([A-Za-z]+)/g, (_m, name: string) => name === "namespaceId" ? a : ids[name]!)
          const absent = Object.fromEntries(params.map((param) => [param, absentIds[param]!()]))
          for (const [caller, headers] of Object.entries(callers)) {
            const real: Result = yield* send(baseUrl, route.method, inA(existing), headers, body)
            const ghost: Result = yield* send(baseUrl, route.method, inA(absent), headers, body)
            const label = `${caller} ${key} under A`
            expect([403, 404], `${label}: ${real.text}`).toContain(real.status)
            expect({ status: ghost.status, code: ghost.body?.error?.code }, `${label}: existing and absent answer alike`).toEqual({
              status: real.status,
              code: real.body?.error?.code
            })
            // Service accounts and credential sources (issue 13): looked up in A, so simply absent.
            if (/service-accounts|credential-sources/.test(route.path)) expect(real.status, label).toBe(404)
          }
        }
        expect(yield* snapshotOf(b)).toEqual(before)

        // From inside A: B's resources cannot be bound, and do not show up.
        for (const headers of Object.values(callers)) {
          const bindForeign = (id: string) =>
            send(baseUrl, "POST", `/namespaces/${a}/configurations`, headers, {
              kind: "agent",
              values: {},
              secretBindings: { KEY: { source: { kind: "secret", namespaceId: b, id } } }
            })
          const bindForeignInA = (id: string) =>
            send(baseUrl, "POST", `/namespaces/${a}/configurations`, headers, {
              kind: "agent",
              values: {},
              secretBindings: { KEY: { source: { kind: "secret", namespaceId: a, id } } }
            })
          expectError(yield* bindForeign(secret.id), 404, "NOT_FOUND")
          expectError(yield* bindForeign(SecretId.make()), 404, "NOT_FOUND")
          expectError(yield* bindForeignInA(secret.id), 404, "NOT_FOUND")
          expectError(yield* bindForeignInA(SecretId.make()), 404, "NOT_FOUND")
          const grant = (resource: unknown) =>
            send(baseUrl, "POST", `/namespaces/${a}/iam/access-bindings`, headers, {
              principalId: scoped,
              roleId: BuiltinRoles.namespaceViewer.id,
              resource
            })
          const grantReal = yield* grant({ kind: "secret", id: secret.id })
          const grantGhost = yield* grant({ kind: "secret", id: SecretId.make() })
          expectError(grantReal, 404, "NOT_FOUND")
          expectError(grantGhost, 404, "NOT_FOUND")
          const grantConfiguration = yield* grant({ kind: "configuration", id: configuration.id })
          expectError(grantConfiguration, 404, "NOT_FOUND")
          // Only A is listed.
          const listed = expectData(yield* send(baseUrl, "GET", "/namespaces", headers), 200) as ReadonlyArray<{ id: string }>
          expect(listed.map((n) => n.id)).toEqual([a])
          expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${a}/secrets`, headers), 200)).toEqual([])
          expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${a}/configurations`, headers), 200)).toEqual([])
          // credential-sources: a source in A cannot be registered from B's Secret, and B's does not show.
          const registerForeign = yield* send(baseUrl, "POST", `/namespaces/${a}/credential-sources`, headers, {
            name: "planted",
            type: "modelvendor",
            secrets: { api_key: { kind: "secret", namespaceId: b, id: secret.id } }
          })
          expectError(registerForeign, 404, "NOT_FOUND")
          expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${a}/credential-sources`, headers), 200)).toEqual([])
          // end credential-sources
          // Issue 13: B's service account and credential source cannot be granted on from A, nor listed.
          for (const resource of [{ kind: "service_account", id: existing.serviceAccountId }, { kind: "credential_source", id: bSource }]) {
            expectError(yield* grant(resource), 404, "NOT_FOUND")
          }
          expectError(yield* grant({ kind: "service_account", id: ServiceAccountId.make() }), 404, "NOT_FOUND")
          expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${a}/service-accounts`, headers), 200)).toEqual([])
        }
        expect(yield* snapshotOf(b)).toEqual(before)
        const planted = yield* sql<{ n: number }>`
          SELECT (SELECT count(*)::int FROM configurations WHERE namespace_id = ${a})
            + (SELECT count(*)::int FROM access_bindings WHERE namespace_id = ${a} AND resource_kind <> 'namespace') AS n
        `
        expect(planted[0]!.n).toBe(0)

        // Issue 13 fields that name other resources, from A's own resources: B's Secret as a
        // service account's reference, B's account or source as an Agent's harness binding. Each
        // answers as if the resource did not exist, and nothing is saved.
        const aConfiguration = expectData(yield* asAdmin("POST", `/namespaces/${a}/configurations`, { kind: "agent", values: {} }), 201)
        const aAccount = expectData(yield* asAdmin("POST", `/namespaces/${a}/service-accounts`, { name: "a-account" }), 201)
        for (const headers of Object.values(callers)) {
          const reference = (name: string) =>
            send(baseUrl, "PATCH", `/namespaces/${a}/service-accounts/${aAccount.id}/credential`, headers, { kind: "api_key", secretRef: { name, key: "value" } })
          expectError(yield* reference("b-secret"), 404, "NOT_FOUND")
          expectError(yield* reference("no-such-secret"), 404, "NOT_FOUND")
          const bindAgent = (harnessAuth: unknown) =>
            send(baseUrl, "POST", `/namespaces/${a}/agents`, headers, { name: "binder", configurationId: aConfiguration.id, harnessAuth })
          for (const [real, ghost] of [
            [{ method: "provider_service_account", serviceAccountId: existing.serviceAccountId }, { method: "provider_service_account", serviceAccountId: ServiceAccountId.make() }],
            [{ method: "credential_source", sourceId: bSource }, { method: "credential_source", sourceId: CredentialSourceId.make() }]
          ] as const) {
            const bound = yield* bindAgent(real)
            const unbound = yield* bindAgent(ghost)
            expect(bound.status, bound.text).toBeGreaterThanOrEqual(400)
            expect({ status: unbound.status, code: unbound.body?.error?.code }).toEqual({ status: bound.status, code: bound.body?.error?.code })
          }
        }
        expect(expectData(yield* asAdmin("GET", `/namespaces/${a}/service-accounts/${aAccount.id}`), 200).credential).toBeNull()
        expect(expectData(yield* asAdmin("GET", `/namespaces/${a}/agents`), 200)).toEqual([])
        expect(yield* snapshotOf(b)).toEqual(before)
      }))
  })
})
