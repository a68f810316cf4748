/**
 * The `recovery_designation` table (SPEC 5.7): at most one row, naming the recovery account and
 * its password method.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { MethodId, PrincipalId, UserId } from "../../schema/ids.js"

export const RecoveryRow = Schema.Struct({ account_id: UserId, method_id: MethodId, principal_id: PrincipalId })
export type RecoveryRow = typeof RecoveryRow.Type

const Designation = Schema.Struct({ account_id: UserId, method_id: MethodId })

export class RecoveryRepo extends Effect.Service<RecoveryRepo>()("@svc/core/RecoveryRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The designation with its account's Principal; `FOR UPDATE OF r` holds it against a concurrent move. */
    const select = (lock: boolean) =>
      SqlSchema.findOne({
        Request: Schema.Void,
        Result: RecoveryRow,
        execute: () => sql`
          SELECT r.account_id, r.method_id, a.principal_id
          FROM recovery_designation r JOIN accounts a ON a.id = r.account_id
          ${lock ? sql`FOR UPDATE OF r` : sql``}
        `
      })(undefined)

    /** Bootstrap's first designation; keeps its SqlError for bootstrap to report. */
    const insert = SqlSchema.void({
      Request: Designation,
      execute: (row) => sql`INSERT INTO recovery_designation (account_id, method_id) VALUES (${row.account_id}, ${row.method_id})`
    })

    const designate = SqlSchema.void({
      Request: Designation,
      execute: (row) => sql`
        INSERT INTO recovery_designation (singleton, account_id, method_id, updated_at)
        VALUES (true, ${row.account_id}, ${row.method_id}, now())
        ON CONFLICT (singleton) DO UPDATE SET account_id = EXCLUDED.account_id, method_id = EXCLUDED.method_id,
          updated_at = now()
      `
    })

    const namesMethod = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ method_id: MethodId }),
      execute: (methodId) => sql`SELECT method_id FROM recovery_designation WHERE method_id = ${methodId}`
    })

    return {
      /** None: no recovery account is designated. */
      current: select(false).pipe(Effect.orDie),
      /** Locked for the rest of the transaction. */
      lockCurrent: select(true).pipe(Effect.catchTag("ParseError", Effect.die)),
      insert,
      designate: (row: typeof Designation.Type) => designate(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** Whether the designation names this method. */
      namesMethod: (methodId: string) =>
        namesMethod(methodId).pipe(Effect.map((row) => row._tag === "Some"), Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}
