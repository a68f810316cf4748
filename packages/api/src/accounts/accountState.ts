import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { AuditLog } from "@svc/core/audit"
import { AccountsRepo, type LockedAccountRow, RecoveryRepo, SessionsRepo } from "@svc/core/db"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import type { Caller } from "@svc/core/iam"
import { MethodId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { administersInstallation, anotherEnabledAdministrator, serializeAdministratorRemovals } from "./grants.js"
import { AccountGuards, isUniqueViolation } from "./guards.js"
import { enabledProviders } from "./providers.js"
import { exportedFn } from "@svc/core/observability"

// Account mutations of SPEC 4.1. Each runs in one transaction: lock the account, check the
// caller holds every grant of its Principal, check `expectedVersion`, change, bump the version,
// audit. 404 (no account), then 403 (grants), then 409 (stale version or state).

const stale = new ResourceConflict({ message: "The account changed since it was read; read it again." })
const lastAdministrator = new ResourceConflict({
  message: "The change would leave no enabled human Installation administrator.",
  details: [{ code: "INVALID_VALUE", path: "/userId" }]
})

export type StateChange = "disable" | "enable" | "revoke"

/** The account mutations; every call needs a human Installation administrator. */
export class AccountStates extends Effect.Service<AccountStates>()("@svc/api/AccountStates", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* AccountsRepo
    const sessions = yield* SessionsRepo
    const recovery = yield* RecoveryRepo
    const audit = yield* AuditLog
    const guards = yield* AccountGuards
    const providers = yield* enabledProviders

    const guarded = (caller: Caller, userId: string, expectedVersion: number) =>
      Effect.gen(function* () {
        const account = yield* guards.lockAccount(userId)
        yield* guards.requireEveryGrant(caller, account.principal_id)
        if (account.version !== expectedVersion) return yield* stale
        return account
      })

    const recordChange = (
      caller: Caller,
      account: LockedAccountRow,
      kind: string,
      version: number,
      extra: Record<string, string> = {}
    ) =>
      audit.record({
        kind,
        outcome: "success",
        actorPrincipalId: caller.principalId,
        resource: { kind: "account", id: account.id },
        details: { principalId: account.principal_id, version, ...extra }
      })

    /**
     * As a human Installation administrator, `change` in one transaction on the account; a 403
     * it ends with is audited after the rollback.
     */
    const onAccount = <A, E extends { readonly _tag: string }>(
      userId: string,
      change: (caller: Caller) => Effect.Effect<A, E>
    ) =>
      Effect.flatMap(guards.requireHumanAdministrator, (caller) =>
        guards.transactional(caller, { kind: "account", id: userId }, change(caller)))

    /**
     * SPEC is silent: a disable or revoke that would leave no enabled human Installation
     * administrator is 409 (docs/decisions/identity.md), since nobody could manage accounts or
     * IAM from then on. Only an account that is one now can be the last; the caller is one too,
     * so in practice this stops the last administrator disabling or revoking themselves, or
     * detaching their last sign-in method, and two administrators disabling each other at once.
     */
    const keepAnAdministrator = (account: LockedAccountRow) =>
      Effect.gen(function* () {
        if (!account.enrolled || account.disabled) return
        if (!(yield* administersInstallation(account.principal_id))) return
        yield* serializeAdministratorRemovals
        if (!(yield* anotherEnabledAdministrator(account.id))) return yield* lastAdministrator
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /** disable, enable, revoke: disable and revoke also revoke every session of the account. */
    const changeState = (change: StateChange) =>
      exportedFn("Accounts.changeState", { attributes: { change } })(function* (userId: string, expectedVersion: number) {
        return yield* onAccount(userId, (caller) =>
          Effect.gen(function* () {
            const account = yield* guarded(caller, userId, expectedVersion)
            if (account.revoked) return yield* new ResourceConflict({ message: "The account is revoked." })
            if (change !== "enable") yield* keepAnAdministrator(account)
            if (change === "disable") yield* accounts.setDisabled({ id: userId, disabled: true })
            if (change === "enable") yield* accounts.setDisabled({ id: userId, disabled: false })
            if (change === "revoke") yield* accounts.markRevoked(userId)
            if (change !== "enable") yield* sessions.revokeForAccount(userId)
            const version = yield* accounts.bumpVersion(userId)
            yield* recordChange(caller, account, `account.${change}d`, version)
            return { userId }
          }))
      })

    /** Enrolment is idempotent: a second call reports `created: false` and changes nothing. */
    const enrol = exportedFn("Accounts.enrol")(function* (userId: string) {
      return yield* onAccount(userId, (caller) =>
        Effect.gen(function* () {
          const account = yield* guards.lockAccount(userId)
          if (account.enrolled) {
            return { created: false, principalId: account.principal_id, userId, version: account.version }
          }
          yield* accounts.markEnrolled(userId)
          const version = yield* accounts.bumpVersion(userId)
          yield* recordChange(caller, account, "account.enrolled", version)
          return { created: true, principalId: account.principal_id, userId, version }
        }))
    })

    /** Detaches one method; the method the recovery designation names cannot be detached (409). */
    const detachMethod = exportedFn("Accounts.detachMethod")(
      function* (userId: string, methodId: string, expectedVersion: number) {
        return yield* onAccount(userId, (caller) =>
          Effect.gen(function* () {
            const account = yield* guarded(caller, userId, expectedVersion)
            const method = yield* accounts.findMethod({ id: methodId, account_id: userId })
            if (Option.isNone(method)) return yield* new NotFound({ message: "The account has no such method." })
            if (yield* recovery.namesMethod(methodId)) {
              return yield* new ResourceConflict({ message: "The recovery designation names this method; move it first." })
            }
            // Without a method the account cannot sign in: the last one counts as a disable.
            if ((yield* accounts.methodCount(userId)) === 1) yield* keepAnAdministrator(account)
            yield* accounts.removeMethod(methodId)
            const version = yield* accounts.bumpVersion(userId)
            yield* recordChange(caller, account, "account.method-detached", version, {
              methodId,
              providerId: method.value.provider_id
            })
            return { userId }
          }))
      }
    )

    /**
     * Attaches an external identity: 409 when the provider is off, the account already has an
     * identity of that provider, or another account has this one.
     */
    const attachIdentity = (provider: "codehost" | "idprovider") =>
      exportedFn("Accounts.attachIdentity", { attributes: { provider } })(
        function* (userId: string, subject: string, expectedVersion: number) {
          return yield* onAccount(userId, (caller) =>
            Effect.gen(function* () {
              const account = yield* guarded(caller, userId, expectedVersion)
              if (!providers[provider]) return yield* new ResourceConflict({ message: `Sign-in with ${provider} is not enabled.` })
              const existing = yield* accounts.holdersOfIdentity({ provider_id: provider, account_id: userId, subject })
              if (existing.length > 0) {
                return yield* new ResourceConflict({
                  message: existing.some((row) => row.account_id === userId)
                    ? `The account already has a ${provider} identity.`
                    : "This external identity is already attached to an account."
                })
              }
              const methodId = MethodId.make()
              yield* accounts.insertMethod({ id: methodId, account_id: account.id, provider_id: provider, subject, password_hash: null })
              const version = yield* accounts.bumpVersion(userId)
              yield* recordChange(caller, account, "account.method-attached", version, { methodId, providerId: provider })
              return { userId }
            }).pipe(
              Effect.catchIf(
                (error): error is SqlError => error instanceof SqlError && isUniqueViolation(error),
                () => Effect.fail(new ResourceConflict({ message: "This external identity is already attached to an account." }))
              )
            ))
        }
      )

    return {
      disable: changeState("disable"),
      enable: changeState("enable"),
      revoke: changeState("revoke"),
      enrol,
      detachMethod,
      linkCodehost: attachIdentity("codehost"),
      linkIdprovider: attachIdentity("idprovider")
    }
  }),
  dependencies: [AccountsRepo.Default, SessionsRepo.Default, RecoveryRepo.Default, AuditLog.Default, AccountGuards.Default]
}) {}
