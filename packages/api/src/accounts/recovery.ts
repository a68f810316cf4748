import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import type { Caller } from "@svc/core/iam"
import { Effect } from "effect"
import { administersInstallation } from "./grants.js"
import { lockAccount, requireEveryGrant, transactional } from "./guards.js"

/** `GET /api/auth/recovery`: the designated account and method, or 404. */
export const readRecovery = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ account_id: string; method_id: string; principal_id: string }>`
    SELECT r.account_id, r.method_id, a.principal_id
    FROM recovery_designation r JOIN accounts a ON a.id = r.account_id
  `
  const row = rows[0]
  if (row === undefined) return yield* new NotFound({ message: "No recovery account is designated." })
  return { methodId: row.method_id, principalId: row.principal_id, userId: row.account_id }
}).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Recovery.read"))

const conflict = (message: string) => new ResourceConflict({ message })

/**
 * `POST /api/auth/recovery` (SPEC 4.1, 5.7). Guards, in order: the current holder is
 * `expectedCurrentUserId` (409; with no designation yet, `expectedCurrentUserId` must be the
 * target itself); the caller holds every grant of the current holder's Principal (403); the
 * target exists (404), is at `expectedVersion` (409), enrolled, enabled, has exactly one
 * password and its Principal administers the Installation (409). Moving to the current holder
 * changes nothing (`changed: false`).
 */
export const moveRecovery = (
  caller: Caller,
  body: { readonly expectedCurrentUserId: string; readonly expectedVersion: number; readonly userId: string }
) =>
  transactional(
    caller,
    { kind: "recovery_designation", id: "installation" },
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const current = yield* sql<{ account_id: string; principal_id: string }>`
        SELECT r.account_id, a.principal_id
        FROM recovery_designation r JOIN accounts a ON a.id = r.account_id
        FOR UPDATE OF r
      `
      const holder = current[0]
      const holderId = holder?.account_id ?? body.userId
      if (holderId !== body.expectedCurrentUserId) {
        return yield* conflict("The recovery designation moved since it was read; read it again.")
      }
      if (holder !== undefined) yield* requireEveryGrant(caller, holder.principal_id)
      const target = yield* lockAccount(body.userId)
      if (target.version !== body.expectedVersion) {
        return yield* conflict("The account changed since it was read; read it again.")
      }
      if (!target.enrolled || target.disabled || target.revoked) {
        return yield* conflict("The recovery account must be enrolled and enabled.")
      }
      const passwords = yield* sql<{ id: string }>`
        SELECT id FROM account_methods WHERE account_id = ${target.id} AND provider_id = 'password'
      `
      if (passwords.length !== 1) return yield* conflict("The recovery account must have exactly one password.")
      if (!(yield* administersInstallation(target.principal_id))) {
        return yield* conflict("The recovery account must administer the Installation.")
      }
      const methodId = passwords[0]!.id
      const result = { methodId, principalId: target.principal_id, userId: target.id }
      if (holder !== undefined && holder.account_id === target.id) {
        const same = yield* sql`SELECT 1 FROM recovery_designation WHERE method_id = ${methodId}`
        if (same.length > 0) return { changed: false, ...result }
      }
      yield* sql`
        INSERT INTO recovery_designation (singleton, account_id, method_id, updated_at)
        VALUES (true, ${target.id}, ${methodId}, now())
        ON CONFLICT (singleton) DO UPDATE SET account_id = EXCLUDED.account_id, method_id = EXCLUDED.method_id,
          updated_at = now()
      `
      yield* recordAudit({
        kind: "recovery.designation-moved",
        outcome: "success",
        actorPrincipalId: caller.principalId,
        resource: { kind: "account", id: target.id },
        details: { principalId: target.principal_id, methodId, previousUserId: holder?.account_id ?? null }
      })
      return { changed: true, ...result }
    })
  ).pipe(Effect.withSpan("Recovery.move"))
