/**
 * Seeding identities for tests, straight into the real database: principals, accounts with
 * passwords, bindings, service keys, sessions and Namespaces. Tests then call the real HTTP
 * API with the credentials these return.
 */
import { SqlClient } from "@effect/sql"
import { hashPassword, issueSession } from "@svc/api"
import { BuiltinRoles, digestOf, INSTALLATION_RESOURCE_ID, newToken } from "@svc/core/iam"
import { AgentId, BindingId, ConfigurationId, NamespaceId, PrincipalId, RoleId, ServiceKeyId, ServicePrincipalId, UserId, MethodId } from "@svc/core/schema"
import { Effect } from "effect"

export const PASSWORD = "correct horse battery staple"

export const createNamespaceRow = (name: string, status = "ready") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = NamespaceId.make()
    yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${id}, ${name}, ${status})`
    return id
  })

export const createServicePrincipal = (name: string, namespaceId: string | null = null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = ServicePrincipalId.make()
    yield* sql`INSERT INTO principals (id, kind, namespace_id, name) VALUES (${id}, 'service', ${namespaceId}, ${name})`
    return id
  })

export interface SeededAccount {
  readonly userId: string
  readonly principalId: string
  readonly methodId: string
  readonly email: string
  readonly password: string
}

/** An enrolled account with a password method. */
export const createAccount = (email: string, options: { readonly password?: string; readonly name?: string } = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const principalId = PrincipalId.make()
    const userId = UserId.make()
    const methodId = MethodId.make()
    const password = options.password ?? PASSWORD
    const normalized = email.toLowerCase()
    yield* sql`INSERT INTO principals (id, kind, name) VALUES (${principalId}, 'human', ${options.name ?? normalized})`
    yield* sql`
      INSERT INTO accounts (id, principal_id, email, name, enrolled_at)
      VALUES (${userId}, ${principalId}, ${normalized}, ${options.name ?? normalized}, now())
    `
    yield* sql`
      INSERT INTO account_methods (id, account_id, provider_id, subject, password_hash)
      VALUES (${methodId}, ${userId}, 'password', ${normalized}, ${yield* hashPassword(password)})
    `
    return { userId, principalId, methodId, email: normalized, password } satisfies SeededAccount
  })

export type BindingTarget =
  | { readonly kind: "installation" }
  | { readonly kind: "namespace"; readonly id: string }
  | { readonly kind: string; readonly id: string; readonly namespaceId: string }

/** A Restriction of `permission` (every one by default) for `principalId` on one exact resource. */
export const insertRestriction = (principalId: string, kind: string, resourceId: string, permission = "*") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`
    INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
    VALUES (${`rst_${crypto.randomUUID()}`}, ${principalId}, ${permission}, ${kind}, ${resourceId})
  `)

export const bindRole = (principalId: string, roleId: string, target: BindingTarget) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = BindingId.make()
    const resourceId = target.kind === "installation" ? INSTALLATION_RESOURCE_ID : (target as { id: string }).id
    const namespaceId = target.kind === "installation"
      ? null
      : target.kind === "namespace"
      ? (target as { id: string }).id
      : (target as { namespaceId: string }).namespaceId
    yield* sql`
      INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id)
      VALUES (${id}, ${principalId}, ${roleId}, ${target.kind}, ${resourceId}, ${namespaceId})
    `
    return id
  })

export const bindInstallationAdmin = (principalId: string) =>
  bindRole(principalId, BuiltinRoles.installationAdmin.id, { kind: "installation" })

/**
 * An Installation Role with `installation:administer` and `installation:read` only: an
 * administrator that holds none of the broader grants of `installation-admin`. Returns its id.
 */
export const createNarrowAdminRole = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const id = RoleId.make()
  yield* sql`
    INSERT INTO roles (id, namespace_id, name, permissions)
    VALUES (${id}, NULL, ${`narrow-admin-${id.slice(-8)}`}, ARRAY['installation:administer', 'installation:read'])
  `
  return id
})

/** A key stored as issuance stores it; returns the plaintext. */
export const insertServiceKey = (
  servicePrincipalId: string,
  options: { readonly namespaceId?: string | null; readonly expiresAt?: Date; readonly revoked?: boolean; readonly name?: string } = {}
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = ServiceKeyId.make()
    const key = newToken("svck")
    const expiresAt = options.expiresAt ?? new Date(Date.now() + 86_400_000)
    yield* sql`
      INSERT INTO service_keys (id, service_principal_id, namespace_id, name, digest, expires_at, revoked_at)
      VALUES (${id}, ${servicePrincipalId}, ${options.namespaceId ?? null}, ${options.name ?? "test"}, ${digestOf(key)},
              ${expiresAt}, ${options.revoked ? new Date() : null})
    `
    return { id, key }
  })

/** A signed-in session for an account: the cookie value and its session key. */
export const signedInSession = (userId: string) => issueSession(userId)

/**
 * An Agent row with its Configuration and its own `agent` principal, as `POST .../agents`
 * leaves them (harness auth `runtime`), for tests that need an Agent to exist.
 */
export const createAgentRow = (namespaceId: string, name = `agent-${crypto.randomUUID().slice(0, 8)}`) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const configurationId = ConfigurationId.make()
    const principalId = ServicePrincipalId.make()
    const id = AgentId.make()
    yield* sql`INSERT INTO configurations (id, namespace_id, kind, generation, "values") VALUES (${configurationId}, ${namespaceId}, 'agent', 1, '{}'::jsonb)`
    yield* sql`INSERT INTO principals (id, kind, namespace_id, name) VALUES (${principalId}, 'agent', ${namespaceId}, ${name})`
    yield* sql`
      INSERT INTO agents (id, namespace_id, name, configuration_id, service_principal_id, execution_mode, settings)
      VALUES (${id}, ${namespaceId}, ${name}, ${configurationId}, ${principalId}, 'embedded', '{"harnessAuth": {"method": "runtime"}}'::jsonb)
    `
    return { id, configurationId, principalId }
  })
