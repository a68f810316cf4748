import { AuditLog } from "@svc/core/audit"
import { AccountsRepo, RecoveryRepo } from "@svc/core/db"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { administersInstallation } from "./grants.js"
import { AccountGuards } from "./guards.js"
import { exportedFn } from "@svc/core/observability"

const conflict = (message: string) => new ResourceConflict({ message })

/** The recovery designation (SPEC 5.7); every call needs a human Installation administrator. */
export class Recovery extends Effect.Service<Recovery>()("@svc/api/Recovery", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* AccountsRepo
    const recovery = yield* RecoveryRepo
    const audit = yield* AuditLog
    const guards = yield* AccountGuards

    /** `GET /api/auth/recovery`: the designated account and method, or 404. */
    const read = exportedFn("Recovery.read")(function* () {
      yield* guards.requireHumanAdministrator
      const row = yield* recovery.current
      if (Option.isNone(row)) return yield* new NotFound({ message: "No recovery account is designated." })
      return { methodId: row.value.method_id, principalId: row.value.principal_id, userId: row.value.account_id }
    })

    /**
     * `POST /api/auth/recovery` (SPEC 4.1, 5.7). Guards, in order: the current holder is
     * `expectedCurrentUserId` (409; with no designation yet, `expectedCurrentUserId` must be the
     * target itself); the caller holds every grant of the current holder's Principal (403); the
     * target exists (404), the caller holds every grant of its Principal (403, the rule of every
     * `expectedVersion` mutation), it is at `expectedVersion` (409), enrolled, enabled, has exactly one
     * password and its Principal administers the Installation (409). Moving to the current holder
     * changes nothing (`changed: false`).
     */
    const move = exportedFn("Recovery.move")(function* (
      body: { readonly expectedCurrentUserId: string; readonly expectedVersion: number; readonly userId: string }
    ) {
      const caller = yield* guards.requireHumanAdministrator
      return yield* guards.transactional(
        caller,
        { kind: "recovery_designation", id: "installation" },
        Effect.gen(function* () {
          const holder = Option.getOrUndefined(yield* recovery.lockCurrent)
          const holderId = holder?.account_id ?? body.userId
          if (holderId !== body.expectedCurrentUserId) {
            return yield* conflict("The recovery designation moved since it was read; read it again.")
          }
          if (holder !== undefined) yield* guards.requireEveryGrant(caller, holder.principal_id)
          const target = yield* guards.lockAccount(body.userId)
          // `expectedVersion` is the target's: the caller must hold every grant of its Principal too (SPEC 4.1).
          yield* guards.requireEveryGrant(caller, target.principal_id)
          if (target.version !== body.expectedVersion) {
            return yield* conflict("The account changed since it was read; read it again.")
          }
          if (!target.enrolled || target.disabled || target.revoked) {
            return yield* conflict("The recovery account must be enrolled and enabled.")
          }
          const passwords = yield* accounts.passwordMethods(target.id)
          const password = passwords[0]
          if (passwords.length !== 1 || password === undefined) {
            return yield* conflict("The recovery account must have exactly one password.")
          }
          if (!(yield* administersInstallation(target.principal_id).pipe(Effect.provideService(SqlClient.SqlClient, sql)))) {
            return yield* conflict("The recovery account must administer the Installation.")
          }
          const methodId = password.id
          const result = { methodId, principalId: target.principal_id, userId: target.id }
          if (holder !== undefined && holder.account_id === target.id && (yield* recovery.namesMethod(methodId))) {
            return { changed: false, ...result }
          }
          yield* recovery.designate({ account_id: target.id, method_id: methodId })
          yield* audit.record({
            kind: "recovery.designation-moved",
            outcome: "success",
            actorPrincipalId: caller.principalId,
            resource: { kind: "account", id: target.id },
            details: { principalId: target.principal_id, methodId, previousUserId: holder?.account_id ?? null }
          })
          return { changed: true, ...result }
        })
      )
    })

    return { read, move }
  }),
  dependencies: [AccountsRepo.Default, RecoveryRepo.Default, AuditLog.Default, AccountGuards.Default]
}) {}
