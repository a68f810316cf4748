/**
 * The `sessions` table (SPEC 5.2): only the digest of a session's cookie value is stored.
 * Its queries keep their `SqlError`: sign-in and sign-out answer a database failure themselves.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { SessionId } from "../../schema/ids.js"

const InsertSession = Schema.Struct({
  id: SessionId,
  token_digest: Schema.Uint8ArrayFromSelf,
  session_key: Schema.String,
  account_id: Schema.String,
  expires_at: Schema.DateFromSelf
})

export class SessionsRepo extends Effect.Service<SessionsRepo>()("@svc/core/SessionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * Stores the session only while its account can sign in, in one statement: a disable or
     * revoke that committed before it leaves no row (None), however late the sign-in's own check
     * ran. `FOR SHARE` waits for a state change in flight and blocks one until this transaction
     * ends, so the change's `revokeForAccount` sees the new session; otherwise a session stored
     * just after a disable revoked the others would come back to life on enable.
     */
    const insert = SqlSchema.findOne({
      Request: InsertSession,
      Result: Schema.Struct({ id: SessionId }),
      execute: (row) => sql`
        INSERT INTO sessions (id, token_digest, session_key, account_id, expires_at)
        SELECT ${row.id}, ${row.token_digest}, ${row.session_key}, a.id, ${row.expires_at}
        FROM accounts a JOIN principals p ON p.id = a.principal_id
        WHERE a.id = ${row.account_id}
          AND a.enrolled_at IS NOT NULL AND NOT a.disabled AND a.revoked_at IS NULL AND p.deleted_at IS NULL
        FOR SHARE OF a
        RETURNING id
      `
    })

    /** Revokes one session; later requests with it get 401. */
    const revoke = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE sessions SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL`
    })

    /** Revokes every session of an account (account revoke, disable). */
    const revokeForAccount = SqlSchema.void({
      Request: Schema.String,
      execute: (accountId) => sql`UPDATE sessions SET revoked_at = now() WHERE account_id = ${accountId} AND revoked_at IS NULL`
    })

    return {
      /** Some: stored; None: the account cannot sign in (disabled, revoked, unenrolled or deleted). */
      insert: (row: typeof InsertSession.Type) => insert(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      revoke: (id: string) => revoke(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      revokeForAccount: (accountId: string) => revokeForAccount(accountId).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}

