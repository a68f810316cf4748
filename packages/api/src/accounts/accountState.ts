import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { Forbidden, NotFound, ResourceConflict } from "@svc/core/errors"
import type { Caller } from "@svc/core/iam"
import { MethodId } from "@svc/core/schema"
import { Effect } from "effect"
import { revokeAccountSessions } from "../auth/sessions.js"
import { isUniqueViolation, type LockedAccount, lockAccount, requireEveryGrant, transactional } from "./guards.js"
import type { EnabledProviders } from "./providers.js"

// Account mutations of SPEC 4.1. Each runs in one transaction: lock the account, check the
// caller holds every grant of its Principal, check `expectedVersion`, change, bump the version,
// audit. 404 (no account), then 403 (grants), then 409 (stale version or state).

const stale = new ResourceConflict({ message: "The account changed since it was read; read it again." })

const guarded = (caller: Caller, userId: string, expectedVersion: number) =>
  Effect.gen(function* () {
    const account = yield* lockAccount(userId)
    yield* requireEveryGrant(caller, account.principal_id)
    if (account.version !== expectedVersion) return yield* stale
    return account
  })

const bumpVersion = (userId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ version: number }>`
      UPDATE accounts SET version = version + 1, updated_at = now() WHERE id = ${userId} RETURNING version
    `
    return rows[0]!.version
  })

const audit = (caller: Caller, account: LockedAccount, kind: string, version: number, extra: Record<string, string> = {}) =>
  recordAudit({
    kind,
    outcome: "success",
    actorPrincipalId: caller.principalId,
    resource: { kind: "account", id: account.id },
    details: { principalId: account.principal_id, version, ...extra }
  })

export type StateChange = "disable" | "enable" | "revoke"

/** disable, enable, revoke: disable and revoke also revoke every session of the account. */
export const changeAccountState = (caller: Caller, change: StateChange, userId: string, expectedVersion: number) =>
  transactional(
    caller,
    { kind: "account", id: userId },
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const account = yield* guarded(caller, userId, expectedVersion)
      if (account.revoked) return yield* new ResourceConflict({ message: "The account is revoked." })
      if (change === "disable") yield* sql`UPDATE accounts SET disabled = true WHERE id = ${userId}`
      if (change === "enable") yield* sql`UPDATE accounts SET disabled = false WHERE id = ${userId}`
      if (change === "revoke") yield* sql`UPDATE accounts SET revoked_at = now() WHERE id = ${userId}`
      if (change !== "enable") yield* revokeAccountSessions(userId)
      const version = yield* bumpVersion(userId)
      yield* audit(caller, account, `account.${change}d`, version)
      return { userId }
    })
  ).pipe(Effect.withSpan("Accounts.changeState", { attributes: { change } }))

/** Enrolment is idempotent: a second call reports `created: false` and changes nothing. */
export const enrolAccount = (caller: Caller, userId: string) =>
  transactional(
    caller,
    { kind: "account", id: userId },
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const account = yield* lockAccount(userId)
      if (account.enrolled) {
        return { created: false, principalId: account.principal_id, userId, version: account.version }
      }
      yield* sql`UPDATE accounts SET enrolled_at = now() WHERE id = ${userId}`
      const version = yield* bumpVersion(userId)
      yield* audit(caller, account, "account.enrolled", version)
      return { created: true, principalId: account.principal_id, userId, version }
    })
  ).pipe(Effect.withSpan("Accounts.enrol"))

/** Detaches one method; the method the recovery designation names cannot be detached (409). */
export const detachMethod = (caller: Caller, userId: string, methodId: string, expectedVersion: number) =>
  transactional(
    caller,
    { kind: "account", id: userId },
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const account = yield* guarded(caller, userId, expectedVersion)
      const methods = yield* sql<{ provider_id: string }>`
        SELECT provider_id FROM account_methods WHERE id = ${methodId} AND account_id = ${userId}
      `
      const method = methods[0]
      if (method === undefined) return yield* new NotFound({ message: "The account has no such method." })
      const designated = yield* sql`SELECT 1 FROM recovery_designation WHERE method_id = ${methodId}`
      if (designated.length > 0) {
        return yield* new ResourceConflict({ message: "The recovery designation names this method; move it first." })
      }
      yield* sql`DELETE FROM account_methods WHERE id = ${methodId}`
      const version = yield* bumpVersion(userId)
      yield* audit(caller, account, "account.method-detached", version, { methodId, providerId: method.provider_id })
      return { userId }
    })
  ).pipe(Effect.withSpan("Accounts.detachMethod"))

/**
 * Attaches an external identity: 409 when the provider is off, the account already has an
 * identity of that provider, or another account has this one.
 */
export const attachIdentity = (
  caller: Caller,
  provider: "codehost" | "idprovider",
  providers: EnabledProviders,
  userId: string,
  subject: string,
  expectedVersion: number
) =>
  transactional(
    caller,
    { kind: "account", id: userId },
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const account = yield* guarded(caller, userId, expectedVersion)
      if (!providers[provider]) return yield* new ResourceConflict({ message: `Sign-in with ${provider} is not enabled.` })
      const existing = yield* sql<{ account_id: string }>`
        SELECT account_id FROM account_methods
        WHERE provider_id = ${provider} AND (account_id = ${userId} OR subject = ${subject})
      `
      if (existing.length > 0) {
        return yield* new ResourceConflict({
          message: existing.some((row) => row.account_id === userId)
            ? `The account already has a ${provider} identity.`
            : "This external identity is already attached to an account."
        })
      }
      const methodId = MethodId.make()
      yield* sql`
        INSERT INTO account_methods (id, account_id, provider_id, subject) VALUES (${methodId}, ${userId}, ${provider}, ${subject})
      `
      const version = yield* bumpVersion(userId)
      yield* audit(caller, account, "account.method-attached", version, { methodId, providerId: provider })
      return { userId }
    }).pipe(
      Effect.catchIf(
        (error) => error._tag === "SqlError" && isUniqueViolation(error),
        () => Effect.fail(new ResourceConflict({ message: "This external identity is already attached to an account." }))
      )
    )
  ).pipe(Effect.withSpan("Accounts.attachIdentity", { attributes: { provider } }))

export type AccountMutationError = NotFound | Forbidden | ResourceConflict
