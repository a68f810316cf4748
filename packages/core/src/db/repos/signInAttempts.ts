/**
 * The `sign_in_attempts` table (migration 0004): external sign-in attempts, created by `start`,
 * consumed once by the callback and redeemed once through the result receipt. Secrets are stored
 * as digests. Its queries keep their `SqlError`: external sign-in answers its own 503.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

const ExternalProvider = Schema.Literal("codehost", "idprovider")

const InsertAttempt = Schema.Struct({
  id: Schema.String,
  provider_id: ExternalProvider,
  state_digest: Schema.Uint8ArrayFromSelf,
  binding_digest: Schema.Uint8ArrayFromSelf,
  code_verifier: Schema.String,
  nonce: Schema.NullOr(Schema.String),
  ttl_seconds: Schema.Int
})

export const ConsumedAttemptRow = Schema.Struct({
  id: Schema.String,
  code_verifier: Schema.String,
  nonce: Schema.NullOr(Schema.String),
  binding_digest: Schema.Uint8ArrayFromSelf,
  expired: Schema.Boolean
})
export type ConsumedAttemptRow = typeof ConsumedAttemptRow.Type

const CompleteAttempt = Schema.Struct({
  id: Schema.String,
  session_id: Schema.String,
  receipt_digest: Schema.Uint8ArrayFromSelf,
  receipt_ttl_seconds: Schema.Int
})

const RedeemReceipt = Schema.Struct({
  id: Schema.String,
  provider_id: ExternalProvider,
  receipt_digest: Schema.Uint8ArrayFromSelf,
  session_id: Schema.String
})

export class SignInAttemptsRepo extends Effect.Service<SignInAttemptsRepo>()("@svc/core/SignInAttemptsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Old attempts are of no use to anyone: each start removes a bounded batch of them. */
    const pruneExpired = SqlSchema.void({
      Request: Schema.Void,
      execute: () => sql`
        DELETE FROM sign_in_attempts WHERE id IN (
          SELECT id FROM sign_in_attempts
          WHERE expires_at < now() AND (receipt_expires_at IS NULL OR receipt_expires_at < now())
          LIMIT 100
        )
      `
    })

    const insert = SqlSchema.void({
      Request: InsertAttempt,
      execute: (row) => sql`
        INSERT INTO sign_in_attempts (id, provider_id, state_digest, binding_digest, code_verifier, nonce, expires_at)
        VALUES (${row.id}, ${row.provider_id}, ${row.state_digest}, ${row.binding_digest},
                ${row.code_verifier}, ${row.nonce}, now() + make_interval(secs => ${row.ttl_seconds}))
      `
    })

    /**
     * Consumes the unconsumed attempt with this state, exactly once: a second callback with the
     * same state finds nothing. The PKCE verifier is erased as it is returned.
     */
    const consume = SqlSchema.findOne({
      Request: Schema.Struct({ provider_id: ExternalProvider, state_digest: Schema.Uint8ArrayFromSelf }),
      Result: ConsumedAttemptRow,
      execute: (key) => sql`
        UPDATE sign_in_attempts t
        SET consumed_at = now(), code_verifier = NULL
        FROM (
          SELECT id, code_verifier, binding_digest FROM sign_in_attempts
          WHERE state_digest = ${key.state_digest} AND provider_id = ${key.provider_id} AND consumed_at IS NULL
          FOR UPDATE
        ) old
        WHERE t.id = old.id
        RETURNING t.id, old.code_verifier, t.nonce, old.binding_digest, t.expires_at <= now() AS expired
      `
    })

    const complete = SqlSchema.void({
      Request: CompleteAttempt,
      execute: (row) => sql`
        UPDATE sign_in_attempts
        SET session_id = ${row.session_id}, receipt_digest = ${row.receipt_digest},
            receipt_expires_at = now() + make_interval(secs => ${row.receipt_ttl_seconds})
        WHERE id = ${row.id}
      `
    })

    /** Marks the receipt used; the key of the session it names, if it was valid. */
    const redeem = SqlSchema.findOne({
      Request: RedeemReceipt,
      Result: Schema.Struct({ session_key: Schema.String }),
      execute: (key) => sql`
        WITH redeemed AS (
          UPDATE sign_in_attempts SET receipt_used_at = now()
          WHERE id = ${key.id} AND provider_id = ${key.provider_id}
            AND receipt_digest = ${key.receipt_digest} AND receipt_used_at IS NULL
            AND receipt_expires_at > now() AND session_id = ${key.session_id}
          RETURNING session_id
        )
        SELECT s.session_key FROM redeemed r JOIN sessions s ON s.id = r.session_id
      `
    })

    return {
      pruneExpired: pruneExpired(undefined).pipe(Effect.catchTag("ParseError", Effect.die)),
      insert: (row: typeof InsertAttempt.Type) => insert(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      consume: (key: { readonly provider_id: "codehost" | "idprovider"; readonly state_digest: Uint8Array }) =>
        consume(key).pipe(Effect.catchTag("ParseError", Effect.die)),
      complete: (row: typeof CompleteAttempt.Type) => complete(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      redeem: (key: typeof RedeemReceipt.Type) => redeem(key).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}
