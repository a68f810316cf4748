/**
 * The identity routes the bad-input fuzz tests attack: IAM Roles, AccessBindings and service
 * principals (SPEC 4.7, DESIGN §6), and the authentication routes of SPEC 4.1 and 5 (sign-in,
 * accounts, account mutations carrying `expectedVersion`, recovery, service keys), each with a
 * valid body, its fields' kinds and a snapshot of what it may write.
 */
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import { createAccount, PASSWORD } from "../../../../testing/identity.js"
import { TestServer } from "../../../../testing/server.js"
import { type Target, tableSnapshot } from "./fuzzBodies.js"
import {
  bindingResourceField,
  boundedText,
  codehostIdentityField,
  codehostSubjectField,
  expectedVersionField,
  expiresInField,
  idproviderSubjectField,
  keyNamespaceField,
  permissionsField,
  principalIdField
} from "./fuzzFieldsIdentity.js"
import { expectData, ORIGIN, seedAdmin, seedNamespace, send } from "./iamServer.js"

const rowsOf = (table: string) => (sql: SqlClient.SqlClient) =>
  Effect.zipWith(
    sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql(table)} t ORDER BY 1`,
    sql<{ row: string }>`SELECT count(*)::text AS row FROM audit_events WHERE outcome = 'success'`,
    (a, b) => [...a, ...b]
  )

/** Tables and audit, joined into one snapshot. */
const snapshotOf = (...tables: ReadonlyArray<string>) =>
  tableSnapshot((sql) => Effect.map(Effect.all(tables.map((table) => rowsOf(table)(sql))), (parts) => parts.flat()))

/** A Namespace, a service principal in it and a second administrator account, and every IAM route to attack. */
export const iamTargets = Effect.gen(function* () {
  const { baseUrl } = yield* TestServer
  const admin = yield* seedAdmin("fuzz-iam-admin@example.com")
  const ns = yield* seedNamespace("fuzz-iam")
  const principal = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/service-principals`, admin.headers, { name: "fuzz-sp" }), 201)
  const targets: ReadonlyArray<Target> = [
    {
      route: "POST /namespaces/:namespaceId/iam/roles",
      method: "POST",
      path: `/namespaces/${ns}/iam/roles`,
      valid: { name: "fuzz-role", permissions: ["agent:read"] },
      fields: { name: "name", permissions: permissionsField },
      required: ["name", "permissions"],
      snapshot: snapshotOf("roles")
    },
    {
      route: "POST /namespaces/:namespaceId/iam/access-bindings",
      method: "POST",
      path: `/namespaces/${ns}/iam/access-bindings`,
      valid: { principalId: principal.id, roleId: BuiltinRoles.namespaceViewer.id, resource: { kind: "namespace", id: ns } },
      fields: { principalId: principalIdField(principal.id), roleId: "reference", resource: bindingResourceField(ns) },
      required: ["principalId", "roleId", "resource"],
      snapshot: snapshotOf("access_bindings")
    },
    {
      route: "POST /iam/service-principals",
      method: "POST",
      path: "/iam/service-principals",
      valid: { name: "fuzz-installation-sp" },
      fields: { name: "name" },
      required: ["name"],
      snapshot: snapshotOf("principals")
    },
    {
      route: "POST /namespaces/:namespaceId/iam/service-principals",
      method: "POST",
      path: `/namespaces/${ns}/iam/service-principals`,
      valid: { name: "fuzz-namespace-sp" },
      fields: { name: "name" },
      required: ["name"],
      snapshot: snapshotOf("principals")
    }
  ]
  return { baseUrl, admin, targets }
})

/** An administrator, a second enrolled account and a service principal, and every authentication route to attack. */
export const authTargets = Effect.gen(function* () {
  const { baseUrl } = yield* TestServer
  const admin = yield* seedAdmin("fuzz-auth-admin@example.com")
  const other = yield* createAccount("fuzz-auth-other@example.com")
  const ns = yield* seedNamespace("fuzz-auth")
  const principal = expectData(yield* send(baseUrl, "POST", "/iam/service-principals", admin.headers, { name: "fuzz-key-sp" }), 201)
  const accountTables = snapshotOf("principals", "accounts", "account_methods", "access_bindings", "sessions", "recovery_designation")
  const email = boundedText(3, 320, [], ["\u0130".repeat(320), "\u0130".repeat(161), "A".repeat(320), "x".repeat(201)])
  const password = boundedText(12, 128)
  const userMutation = (action: string, fields: Target["fields"], valid: Record<string, unknown>): Target => ({
    route: `POST /api/auth/accounts/:userId/${action}`,
    method: "POST",
    path: `/api/auth/accounts/${other.userId}/${action}`,
    valid: { expectedVersion: 1, ...valid },
    fields: { expectedVersion: expectedVersionField, ...fields },
    required: ["expectedVersion", ...Object.keys(fields)],
    snapshot: accountTables
  })
  const credentials: ReadonlyArray<Target> = [
    {
      route: "POST /api/auth/sign-in/email",
      method: "POST",
      path: "/api/auth/sign-in/email",
      valid: { email: other.email, password: `${PASSWORD}-wrong` },
      fields: { email, password },
      required: ["email", "password"],
      // A failed sign-in records its attempt for throttling (SPEC 5.4): only sessions and accounts must not change.
      snapshot: tableSnapshot((sql) => sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM (SELECT id, account_id FROM sessions UNION ALL SELECT id, email FROM accounts ORDER BY 1) t`),
      headers: { origin: ORIGIN },
      shapedKeepsValid: false,
      runs: 30
    },
    {
      route: "POST /api/auth/accounts",
      method: "POST",
      path: "/api/auth/accounts",
      valid: { email: "fuzz-new@example.com", password: "p".repeat(12) },
      fields: {
        email,
        password,
        name: boundedText(1, 200, [], ["n".repeat(200)]),
        roleId: boundedText(1, 200, ["role_00000000-0000-4000-8000-00000000ffff", BuiltinRoles.namespaceAdmin.id], [BuiltinRoles.installationAdmin.id]),
        codehost: codehostIdentityField
      },
      required: ["email", "password"],
      snapshot: accountTables,
      runs: 30
    },
    {
      route: "POST /api/auth/service-keys",
      method: "POST",
      path: "/api/auth/service-keys",
      valid: { servicePrincipalId: principal.id, name: "fuzz-key" },
      fields: {
        servicePrincipalId: boundedText(1, 200, ["sp_00000000-0000-4000-8000-000000000000", other.principalId], [principal.id]),
        name: boundedText(1, 32, [" ", "\t\t", "key\u0000"], ["k".repeat(32)]),
        namespaceId: keyNamespaceField(ns),
        expiresIn: expiresInField
      },
      required: ["servicePrincipalId", "name"],
      snapshot: snapshotOf("service_keys")
    }
  ]
  const accounts: ReadonlyArray<Target> = [
    userMutation("disable", {}, {}),
    userMutation("providers/codehost", { subject: codehostSubjectField }, { subject: "12345" }),
    userMutation("providers/idprovider", { subject: idproviderSubjectField }, { subject: "user-1" }),
    {
      route: "POST /api/auth/recovery",
      method: "POST",
      path: "/api/auth/recovery",
      valid: { expectedCurrentUserId: admin.userId, expectedVersion: 1, userId: other.userId },
      fields: { expectedCurrentUserId: boundedText(1, 200, [], [admin.userId]), expectedVersion: expectedVersionField, userId: boundedText(1, 200, [], [other.userId, admin.userId]) },
      required: ["expectedCurrentUserId", "expectedVersion", "userId"],
      snapshot: accountTables
    }
  ]
  return { baseUrl, admin, credentials, accounts }
})
