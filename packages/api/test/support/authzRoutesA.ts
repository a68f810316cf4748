/** The authorization matrix's expectations: Installation, Namespaces, IAM, Secrets, Configurations, Agents, probes, extensions, plugins. */
import { BuiltinRoles } from "@svc/core/iam"
import { RequestId } from "@svc/core/schema"
import { Effect } from "effect"
import {
  createNamespaceRow,
  createServicePrincipal
} from "../../../../testing/identity.js"
import { type RouteCase, unique, customRole, nsBinding, fixed, secretRow, configurationRow, agentRow, provisioningRow, revisionRow, inNamespace, onInstallation, humanAdministratorOnly } from "./authzFixtures.js"

export const routesA: Record<string, RouteCase> = {
  // Installation (SPEC 4.2)
  "GET /installation": { prepare: fixed({ path: "/installation" }), expect: onInstallation(200) },
  "GET /backends": { prepare: fixed({ path: "/backends" }), expect: onInstallation(200) },
  // Development only; the Installation is always made before the server runs (SPEC 5.6.1).
  "POST /installation/bootstrap": { prepare: fixed({ path: "/installation/bootstrap" }), expect: humanAdministratorOnly(409), code: "INSTALLATION_EXISTS" },
  // Namespaces (SPEC 4.2)
  "POST /namespaces": {
    prepare: () => Effect.succeed({ path: "/namespaces", body: { name: `n-${unique()}` } }),
    expect: onInstallation(201)
  },
  // A list is filtered, never refused.
  "GET /namespaces": {
    prepare: fixed({ path: "/namespaces" }),
    expect: { foreignNamespaceKey: 200, keyWithoutGrant: 200, humanWithoutGrant: 200, administrator: 200 }
  },
  "GET /namespaces/:namespaceId": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}` }),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId": {
    prepare: () => Effect.map(createNamespaceRow(`d-${unique()}`), (id) => ({ path: `/namespaces/${id}` })),
    expect: inNamespace(202)
  },
  // IAM Roles (SPEC 4.7)
  "POST /namespaces/:namespaceId/iam/roles": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/roles`, body: { name: `r-${unique()}`, permissions: ["agent:read"] } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/iam/roles": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/roles` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/iam/roles/:roleId": {
    prepare: (f) => Effect.map(customRole(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/roles/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/iam/roles/:roleId": {
    prepare: (f) => Effect.map(customRole(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/roles/${id}` })),
    expect: inNamespace(204)
  },
  // IAM AccessBindings (SPEC 4.7)
  "POST /namespaces/:namespaceId/iam/access-bindings": {
    prepare: (f) =>
      Effect.map(createServicePrincipal(`p-${unique()}`, f.ns), (principalId) => ({
        path: `/namespaces/${f.ns}/iam/access-bindings`,
        body: { principalId, roleId: BuiltinRoles.namespaceViewer.id, resource: { kind: "namespace", id: f.ns } }
      })),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/iam/access-bindings": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/access-bindings` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/iam/access-bindings/:bindingId": {
    prepare: (f) => Effect.map(nsBinding(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/access-bindings/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/iam/access-bindings/:bindingId": {
    prepare: (f) => Effect.map(nsBinding(f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/access-bindings/${id}` })),
    expect: inNamespace(204)
  },
  // Secrets (DESIGN §7)
  "POST /namespaces/:namespaceId/secrets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/secrets`, body: { name: `s-${unique()}`, value: "matrix" } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/secrets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/secrets` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/secrets/:secretId": {
    prepare: (f) => Effect.map(secretRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/secrets/${id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/secrets/:secretId": {
    prepare: (f) => Effect.map(secretRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/secrets/${id}`, body: { value: "matrix-2" } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/secrets/:secretId": {
    prepare: (f) => Effect.map(secretRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/secrets/${id}` })),
    expect: inNamespace(204)
  },
  // Configurations (SPEC 4.3)
  "POST /namespaces/:namespaceId/configurations": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/configurations`, body: { kind: "agent", values: {} } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/configurations": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/configurations` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/configurations/:configurationId": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/configurations/${id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/configurations/:configurationId": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/configurations/${id}`, body: { values: { a: 1 } } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/configurations/:configurationId": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/configurations/${id}` })),
    expect: inNamespace(204)
  },
  // Agents (SPEC 4.4)
  "POST /namespaces/:namespaceId/agents": {
    prepare: (f) => Effect.map(configurationRow(f.ns), (configurationId) => ({ path: `/namespaces/${f.ns}/agents`, body: { name: `a-${unique()}`, configurationId } })),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/agents": { prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/agents` }), expect: inNamespace(200) },
  "GET /namespaces/:namespaceId/agents/:agentId": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/agents/:agentId": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}`, body: { configurationId: a.configurationId } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/agents/:agentId": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}` })),
    expect: inNamespace(202)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/deploy": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/deploy` })),
    expect: inNamespace(202)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/stop": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/stop` })),
    expect: inNamespace(202)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/deployments/${r.revisionId}` })),
    expect: inNamespace(200)
  },
  // Permission probes (extension): about the caller only on the Installation; read first otherwise.
  "GET /permissions": {
    prepare: fixed({ path: "/permissions" }),
    expect: { foreignNamespaceKey: 200, keyWithoutGrant: 200, humanWithoutGrant: 200, administrator: 200 }
  },
  "GET /namespaces/:namespaceId/permissions": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/permissions` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/permissions": {
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/permissions` })),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/revisions": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/revisions` })),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/revisions/:revisionId": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/revisions/${r.revisionId}` })),
    expect: inNamespace(200)
  },
  // Extensions (DESIGN §18). The revision has no work item: its status is terminal, so the event
  // stream sends one event and closes.
  "GET /namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/events": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/deployments/${r.revisionId}/events` })),
    expect: inNamespace(200)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/revisions/:revisionId/redeploy": {
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/revisions/${r.revisionId}/redeploy` })),
    expect: inNamespace(202)
  },
  "POST /namespaces/:namespaceId/agents/provision": {
    prepare: (f) =>
      Effect.succeed({
        path: `/namespaces/${f.ns}/agents/provision`,
        body: { requestId: RequestId.make(), name: `a-${unique()}`, configuration: { kind: "agent", values: {} } }
      }),
    expect: inNamespace(202)
  },
  "GET /namespaces/:namespaceId/agents/provision/:workId": {
    prepare: (f) => Effect.map(provisioningRow(f.ns, f.admin.principalId), (id) => ({ path: `/namespaces/${f.ns}/agents/provision/${id}` })),
    expect: inNamespace(200)
  },
  "POST /namespaces/:namespaceId/agents/provision/:workId/retry": {
    prepare: (f) => Effect.map(provisioningRow(f.ns, f.admin.principalId), (id) => ({ path: `/namespaces/${f.ns}/agents/provision/${id}/retry` })),
    expect: inNamespace(202)
  },
  // plugins (issue 13, DESIGN §15): this server selects the bundled Plugin Driver.
  "POST /namespaces/:namespaceId/agents/plugins": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/agents/plugins`, body: {} }),
    expect: inNamespace(200)
  },
  "POST /namespaces/:namespaceId/agents/plugins/details": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/agents/plugins/details`, body: { pluginId: "bundled:zalo" } }),
    expect: inNamespace(200)
  },
  // end plugins
  // repository options (issue 12, SPEC 4.4): needs agent:create; this server has no Repo Driver, so `[]`.
  "GET /namespaces/:namespaceId/agents/repository-options": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/agents/repository-options?descriptionRefs=widgets` }),
    expect: inNamespace(200)
  },
  // end repository options
}
