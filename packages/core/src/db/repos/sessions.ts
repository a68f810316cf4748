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

    const insert = SqlSchema.void({
      Request: InsertSession,
      execute: (row) => sql`
        INSERT INTO sessions (id, token_digest, session_key, account_id, expires_at)
        VALUES (${row.id}, ${row.token_digest}, ${row.session_key}, ${row.account_id}, ${row.expires_at})
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
      insert: (row: typeof InsertSession.Type) => insert(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      revoke: (id: string) => revoke(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      revokeForAccount: (accountId: string) => revokeForAccount(accountId).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}

