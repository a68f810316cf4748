/** The authorization matrix's expectations: Presets, service principals, service keys, sessions, accounts, audit, service accounts, credential sources. */
import { SqlClient } from "@effect/sql"
import { ServiceAccountId } from "@svc/core/schema"
import { Effect } from "effect"
import {
  createServicePrincipal,
  insertServiceKey,
  PASSWORD
} from "../../../../testing/identity.js"
import { type RouteCase, unique, fixed, secretRow, agentRow, revisionRow, presetRow, credentialSourceRow, inNamespace, onInstallation, humanAdministratorOnly } from "./authzFixtures.js"

export const routesB: Record<string, RouteCase> = {
  // Presets (DESIGN §7)
  "POST /namespaces/:namespaceId/presets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/presets`, body: { name: `p-${unique()}`, template: {} } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/presets": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/presets` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/presets/:presetId": {
    prepare: (f) => Effect.map(presetRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/presets/${id}` })),
    expect: inNamespace(200)
  },
  "PATCH /namespaces/:namespaceId/presets/:presetId": {
    prepare: (f) => Effect.map(presetRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/presets/${id}`, body: { name: `q-${unique()}` } })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/presets/:presetId": {
    prepare: (f) => Effect.map(presetRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/presets/${id}` })),
    expect: inNamespace(204)
  },
  "POST /namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/diagnostics": {
    // The revision is not the active one: 409 once authorized.
    prepare: (f) => Effect.map(revisionRow(f.ns), (r) => ({ path: `/namespaces/${f.ns}/agents/${r.agentId}/deployments/${r.revisionId}/diagnostics` })),
    expect: inNamespace(409)
  },
  "GET /namespaces/:namespaceId/agents/:agentId/workspace/files/:name": {
    // No Compute host in this in-process server: 503 once authorized.
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/workspace/files/USER.md` })),
    expect: inNamespace(503)
  },
  "PUT /namespaces/:namespaceId/agents/:agentId/workspace/files/:name": {
    // Never deployed: 409 once authorized.
    prepare: (f) => Effect.map(agentRow(f.ns), (a) => ({ path: `/namespaces/${f.ns}/agents/${a.id}/workspace/files/USER.md`, body: { content: "x" } })),
    expect: inNamespace(409)
  },
  // Service principals (DESIGN §6)
  "POST /iam/service-principals": { prepare: fixed({ path: "/iam/service-principals", body: { name: "matrix" } }), expect: onInstallation(201) },
  "GET /iam/service-principals": { prepare: fixed({ path: "/iam/service-principals" }), expect: onInstallation(200) },
  "GET /iam/service-principals/:servicePrincipalId": {
    prepare: (f) => Effect.map(f.freshServicePrincipal(), (id) => ({ path: `/iam/service-principals/${id}` })),
    expect: onInstallation(200)
  },
  "DELETE /iam/service-principals/:servicePrincipalId": {
    prepare: (f) => Effect.map(f.freshServicePrincipal(), (id) => ({ path: `/iam/service-principals/${id}` })),
    expect: onInstallation(204)
  },
  "POST /namespaces/:namespaceId/iam/service-principals": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/service-principals`, body: { name: "matrix" } }),
    expect: inNamespace(201)
  },
  "GET /namespaces/:namespaceId/iam/service-principals": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/iam/service-principals` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/iam/service-principals/:servicePrincipalId": {
    prepare: (f) =>
      Effect.map(createServicePrincipal(`s-${unique()}`, f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/service-principals/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/iam/service-principals/:servicePrincipalId": {
    prepare: (f) =>
      Effect.map(createServicePrincipal(`s-${unique()}`, f.ns), (id) => ({ path: `/namespaces/${f.ns}/iam/service-principals/${id}` })),
    expect: inNamespace(204)
  },
  // Service keys (SPEC 5.5): administer on the Installation; a Namespace key cannot manage keys.
  "POST /api/auth/service-keys": {
    prepare: (f) =>
      Effect.map(f.freshServicePrincipal(), (servicePrincipalId) => ({
        path: "/api/auth/service-keys",
        body: { servicePrincipalId, name: "matrix" }
      })),
    expect: onInstallation(201)
  },
  "DELETE /api/auth/service-keys/:keyId": {
    prepare: (f) =>
      Effect.gen(function* () {
        const { id } = yield* insertServiceKey(yield* f.freshServicePrincipal())
        return { path: `/api/auth/service-keys/${id}` }
      }),
    expect: onInstallation(200)
  },
  // Sessions (SPEC 4.1, 5.2): sign-out needs a session; a key has none.
  "POST /api/auth/sign-out": {
    prepare: fixed({ path: "/api/auth/sign-out" }),
    expect: { foreignNamespaceKey: 401, keyWithoutGrant: 401, humanWithoutGrant: 200, administrator: 200 }
  },
  // Accounts and recovery (SPEC 4.1): a current human Installation administrator.
  "POST /api/auth/accounts": {
    prepare: () => Effect.succeed({ path: "/api/auth/accounts", body: { email: `new-${unique()}@example.com`, password: PASSWORD } }),
    expect: humanAdministratorOnly(201)
  },
  "GET /api/auth/accounts/:userId": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}` })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/disable": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/disable`, body: { expectedVersion: 1 } })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/enable": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/enable`, body: { expectedVersion: 1 } })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/revoke": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/revoke`, body: { expectedVersion: 1 } })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/enrol": {
    prepare: (f) => Effect.map(f.freshAccount(), (a) => ({ path: `/api/auth/accounts/${a.userId}/enrol` })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/methods/:methodId/detach": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: `/api/auth/accounts/${a.userId}/methods/${a.methodId}/detach`,
        body: { expectedVersion: 1 }
      })),
    expect: humanAdministratorOnly(200)
  },
  "POST /api/auth/accounts/:userId/providers/codehost": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: `/api/auth/accounts/${a.userId}/providers/codehost`,
        body: { expectedVersion: 1, subject: "12345" }
      })),
    expect: humanAdministratorOnly(409)
  },
  "POST /api/auth/accounts/:userId/providers/idprovider": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: `/api/auth/accounts/${a.userId}/providers/idprovider`,
        body: { expectedVersion: 1, subject: "someone" }
      })),
    expect: humanAdministratorOnly(409)
  },
  "GET /api/auth/recovery": { prepare: fixed({ path: "/api/auth/recovery" }), expect: humanAdministratorOnly(404) },
  "POST /api/auth/recovery": {
    prepare: (f) =>
      Effect.map(f.freshAccount(), (a) => ({
        path: "/api/auth/recovery",
        body: { expectedCurrentUserId: a.userId, expectedVersion: 1, userId: f.admin.userId }
      })),
    expect: humanAdministratorOnly(409)
  },
  // Audit (DESIGN §18, an extension)
  "GET /audit": { prepare: fixed({ path: "/audit" }), expect: onInstallation(200) },
  "GET /namespaces/:namespaceId/audit": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/audit` }),
    expect: inNamespace(200)
  },
  // --- service accounts (issue 13; SPEC 4.5): no ServiceAccount Driver here, so accounts are native ---
  ...((): Record<string, RouteCase> => {
    const accountRow = (namespaceId: string) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const id = ServiceAccountId.make()
        yield* sql`INSERT INTO service_accounts (id, namespace_id, name, state) VALUES (${id}, ${namespaceId}, ${`sa-${unique()}`}, 'ready')`
        return `/namespaces/${namespaceId}/service-accounts/${id}`
      })
    /** A Secret named for the reference, and an account to set it on. */
    const withSecret = (namespaceId: string) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const secret = yield* secretRow(namespaceId)
        const [row] = yield* sql<{ name: string }>`SELECT name FROM secrets WHERE id = ${secret}`
        return { path: `${yield* accountRow(namespaceId)}/credential`, body: { kind: "api_key", secretRef: { name: row!.name, key: "value" } } }
      })
    return {
      "POST /namespaces/:namespaceId/service-accounts": {
        prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/service-accounts`, body: { name: `sa-${unique()}` } }),
        expect: inNamespace(201)
      },
      "GET /namespaces/:namespaceId/service-accounts": {
        prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/service-accounts` }),
        expect: inNamespace(200)
      },
      "GET /namespaces/:namespaceId/service-accounts/:serviceAccountId": {
        prepare: (f) => Effect.map(accountRow(f.ns), (path) => ({ path })),
        expect: inNamespace(200)
      },
      "POST /namespaces/:namespaceId/service-accounts/:serviceAccountId/credentials": {
        // No ServiceAccount Driver: 503 once authorized.
        prepare: (f) => Effect.map(accountRow(f.ns), (path) => ({ path: `${path}/credentials`, body: {} })),
        expect: inNamespace(503)
      },
      "PATCH /namespaces/:namespaceId/service-accounts/:serviceAccountId/credential": {
        prepare: (f) => withSecret(f.ns),
        expect: inNamespace(200)
      },
      "DELETE /namespaces/:namespaceId/service-accounts/:serviceAccountId": {
        prepare: (f) => Effect.map(accountRow(f.ns), (path) => ({ path })),
        expect: inNamespace(204)
      }
    }
  })(),
  // --- end service accounts ---
  // credential-sources (SPEC 4.6). This Installation selects no Credential Gateway: an authorized
  // create or delete answers 503, a read still succeeds (its status says why).
  "POST /namespaces/:namespaceId/credential-sources": {
    prepare: (f) =>
      Effect.map(secretRow(f.ns), (secretId) => ({
        path: `/namespaces/${f.ns}/credential-sources`,
        body: { name: `cs-${unique()}`, type: "modelvendor", secrets: { api_key: { kind: "secret", namespaceId: f.ns, id: secretId } } }
      })),
    expect: inNamespace(503)
  },
  "GET /namespaces/:namespaceId/credential-sources": {
    prepare: (f) => Effect.succeed({ path: `/namespaces/${f.ns}/credential-sources` }),
    expect: inNamespace(200)
  },
  "GET /namespaces/:namespaceId/credential-sources/:credentialSourceId": {
    prepare: (f) => Effect.map(credentialSourceRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/credential-sources/${id}` })),
    expect: inNamespace(200)
  },
  "DELETE /namespaces/:namespaceId/credential-sources/:credentialSourceId": {
    prepare: (f) => Effect.map(credentialSourceRow(f.ns), (id) => ({ path: `/namespaces/${f.ns}/credential-sources/${id}` })),
    expect: inNamespace(503)
  }
  // end credential-sources
}
