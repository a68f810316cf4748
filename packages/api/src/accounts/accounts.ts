import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { Forbidden, InvalidRequest, NotFound, ResourceConflict } from "@svc/core/errors"
import { BuiltinRoles, type Caller, INSTALLATION_RESOURCE_ID } from "@svc/core/iam"
import { BindingId, MethodId, PrincipalId, UserId } from "@svc/core/schema"
import { Effect } from "effect"
import { hashPassword } from "../auth/passwords.js"
import { isUniqueViolation, transactional } from "./guards.js"
import type { EnabledProviders } from "./providers.js"
import type { AccountState, CreateAccountBody, CreatedAccount } from "@svc/core/api"

const NAMESPACE_ROLE_IDS: ReadonlyArray<string> = Object.values(BuiltinRoles)
  .filter((role) => role.scope === "namespace")
  .map((role) => role.id)

const duplicateEmail = new ResourceConflict({ message: "An account with this email already exists." })
const codehostOff = new ResourceConflict({ message: "Sign-in with codehost is not enabled." })
const identityTaken = new ResourceConflict({ message: "This external identity is already attached to an account." })

/**
 * `POST /api/auth/accounts` (SPEC 4.1, 5.7): one transaction writes the Principal, the enrolled
 * account, its password, the optional Installation grant and code-host identity, and the
 * `account.created` audit. No session is issued.
 */
export const createAccount = (
  caller: Caller,
  body: typeof CreateAccountBody.Type,
  providers: EnabledProviders
): Effect.Effect<typeof CreatedAccount.Type, InvalidRequest | Forbidden | ResourceConflict, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const email = body.email.toLowerCase()
    const name = body.name ?? email
    if (body.codehost !== undefined && !providers.codehost) return yield* codehostOff
    const passwordHash = yield* hashPassword(body.password)
    const userId = UserId.make()
    const principalId = PrincipalId.make()
    const write = Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const taken = yield* sql<{ id: string }>`SELECT id FROM accounts WHERE email = ${email}`
      if (taken.length > 0) return yield* duplicateEmail
      if (body.roleId !== undefined) {
        const roles = yield* sql<{ id: string }>`SELECT id FROM roles WHERE id = ${body.roleId} AND namespace_id IS NULL`
        if (roles.length === 0 || NAMESPACE_ROLE_IDS.includes(body.roleId)) {
          return yield* new InvalidRequest({
            message: "roleId must name an existing Installation-scoped Role.",
            details: [{ code: "INVALID_VALUE", path: "/roleId" }]
          })
        }
        // No escalation: the administrator may grant only a Role it holds on the Installation.
        const held = yield* sql<{ id: string }>`
          SELECT id FROM access_bindings
          WHERE principal_id = ${caller.principalId} AND role_id = ${body.roleId} AND resource_kind = 'installation'
        `
        if (held.length === 0) return yield* new Forbidden({ message: "The caller may grant only a Role it holds on the Installation." })
      }
      if (body.codehost !== undefined) {
        const used = yield* sql`SELECT 1 FROM account_methods WHERE provider_id = 'codehost' AND subject = ${body.codehost.subject}`
        if (used.length > 0) return yield* identityTaken
      }
      yield* sql`INSERT INTO principals (id, kind, name) VALUES (${principalId}, 'human', ${name})`
      yield* sql`
        INSERT INTO accounts (id, principal_id, email, name, enrolled_at)
        VALUES (${userId}, ${principalId}, ${email}, ${name}, now())
      `
      yield* sql`
        INSERT INTO account_methods (id, account_id, provider_id, subject, password_hash)
        VALUES (${MethodId.make()}, ${userId}, 'password', ${email}, ${passwordHash})
      `
      if (body.codehost !== undefined) {
        yield* sql`
          INSERT INTO account_methods (id, account_id, provider_id, subject)
          VALUES (${MethodId.make()}, ${userId}, 'codehost', ${body.codehost.subject})
        `
      }
      if (body.roleId !== undefined) {
        yield* sql`
          INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id)
          VALUES (${BindingId.make()}, ${principalId}, ${body.roleId}, 'installation', ${INSTALLATION_RESOURCE_ID}, NULL)
        `
      }
      yield* recordAudit({
        kind: "account.created",
        outcome: "success",
        actorPrincipalId: caller.principalId,
        resource: { kind: "account", id: userId },
        details: body.roleId !== undefined
          ? { principalId, roleId: body.roleId, codehost: body.codehost !== undefined }
          : { principalId, grant: "none", codehost: body.codehost !== undefined }
      })
      return { email, id: userId, name, principalId }
    }).pipe(
      Effect.catchIf(
        (error) => error._tag === "SqlError" && isUniqueViolation(error),
        () => Effect.fail(new ResourceConflict({ message: "The email or external identity is already in use." }))
      )
    )
    return yield* transactional(caller, { kind: "account", id: userId }, write)
  }).pipe(Effect.withSpan("Accounts.create"))

/** `GET /api/auth/accounts/{userId}`: state, methods and version (SPEC 2.12). */
export const readAccount = (userId: string): Effect.Effect<typeof AccountState.Type, NotFound, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* sql<{ id: string; principal_id: string; disabled: boolean; version: number }>`
      SELECT id, principal_id, (disabled OR revoked_at IS NOT NULL) AS disabled, version
      FROM accounts WHERE id = ${userId}
    `
    const account = accounts[0]
    if (account === undefined) return yield* new NotFound({ message: "The account does not exist." })
    const methods = yield* sql<{ id: string; provider_id: "password" | "codehost" | "idprovider"; subject: string }>`
      SELECT id, provider_id, subject FROM account_methods WHERE account_id = ${userId} ORDER BY created_at, id
    `
    return {
      disabled: account.disabled,
      methods: methods.map((m) => ({ methodId: m.id, providerId: m.provider_id, subject: m.subject })),
      principalId: account.principal_id,
      userId: account.id,
      version: account.version
    }
  }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Accounts.read"))
