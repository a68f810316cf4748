/**
 * The `idempotency_keys` table (DESIGN §18, docs/decisions/idempotency.md): a reservation per
 * caller principal and key, inserted before the first request acts and completed with its
 * response. Expiry and abandonment are judged by the database clock, so every replica agrees.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_HOURS = 24
/** An in-flight reservation older than this was abandoned (its request died before answering). */
export const IDEMPOTENCY_ABANDONED_MINUTES = 5

export const IdempotencyClaim = Schema.Struct({
  principal_id: Schema.String,
  key: Schema.String,
  method: Schema.String,
  path: Schema.String,
  body_digest: Schema.String
})
export type IdempotencyClaim = typeof IdempotencyClaim.Type

const KeyOf = Schema.Struct({ principal_id: Schema.String, key: Schema.String })
export type IdempotencyKeyOf = typeof KeyOf.Type

export const IdempotencyRow = Schema.Struct({
  method: Schema.String,
  path: Schema.String,
  body_digest: Schema.String,
  status: Schema.NullOr(Schema.Number),
  response_body: Schema.Unknown,
  withheld: Schema.Boolean,
  /** Past `expires_at`, or in flight for longer than the abandonment limit. */
  reusable: Schema.Boolean
})
export type IdempotencyRow = typeof IdempotencyRow.Type

const Completion = Schema.Struct({
  principal_id: Schema.String,
  key: Schema.String,
  status: Schema.Number,
  response_body: Schema.NullOr(Schema.String),
  withheld: Schema.Boolean
})

const Inserted = Schema.Struct({ key: Schema.String })
const Count = Schema.Struct({ n: Schema.Number })

export class IdempotencyKeysRepo extends Effect.Service<IdempotencyKeysRepo>()("@svc/core/IdempotencyKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The reservation: one row under the unique (principal, key); false when it exists. */
    const reserve = SqlSchema.findOne({
      Request: IdempotencyClaim,
      Result: Inserted,
      execute: (claim) => sql`
        INSERT INTO idempotency_keys (principal_id, key, method, path, body_digest, expires_at)
        VALUES (${claim.principal_id}, ${claim.key}, ${claim.method}, ${claim.path}, ${claim.body_digest},
          now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS}))
        ON CONFLICT (principal_id, key) DO NOTHING
        RETURNING key
      `
    })

    const find = SqlSchema.findOne({
      Request: KeyOf,
      Result: IdempotencyRow,
      execute: (key) => sql`
        SELECT method, path, body_digest, status, response_body, withheld,
          (expires_at <= now() OR (status IS NULL
            AND created_at < now() - make_interval(mins => ${IDEMPOTENCY_ABANDONED_MINUTES}))) AS reusable
        FROM idempotency_keys
        WHERE principal_id = ${key.principal_id} AND key = ${key.key}
      `
    })

    /** Frees an expired or abandoned row so the next reservation can take the key. */
    const removeReusable = SqlSchema.void({
      Request: KeyOf,
      execute: (key) => sql`
        DELETE FROM idempotency_keys
        WHERE principal_id = ${key.principal_id} AND key = ${key.key}
          AND (expires_at <= now() OR (status IS NULL
            AND created_at < now() - make_interval(mins => ${IDEMPOTENCY_ABANDONED_MINUTES})))
      `
    })

    const complete = SqlSchema.void({
      Request: Completion,
      execute: (row) => sql`
        UPDATE idempotency_keys
        SET status = ${row.status}, response_body = ${row.response_body}::jsonb, withheld = ${row.withheld}
        WHERE principal_id = ${row.principal_id} AND key = ${row.key} AND status IS NULL
      `
    })

    /** Drops an in-flight reservation whose response is not kept, so a retry acts again. */
    const release = SqlSchema.void({
      Request: KeyOf,
      execute: (key) => sql`
        DELETE FROM idempotency_keys
        WHERE principal_id = ${key.principal_id} AND key = ${key.key} AND status IS NULL
      `
    })

    /** Deletes every expired key; the number deleted. */
    const sweepExpired = SqlSchema.single({
      Request: Schema.Void,
      Result: Count,
      execute: () => sql`
        WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at <= now() RETURNING 1)
        SELECT count(*)::int AS n FROM gone
      `
    })

    return {
      reserve: (claim: IdempotencyClaim) => reserve(claim).pipe(Effect.map((row) => row._tag === "Some"), Effect.orDie),
      find: (key: IdempotencyKeyOf) => find(key).pipe(Effect.orDie),
      removeReusable: (key: IdempotencyKeyOf) => removeReusable(key).pipe(Effect.orDie),
      complete: (row: typeof Completion.Type) => complete(row).pipe(Effect.orDie),
      release: (key: IdempotencyKeyOf) => release(key).pipe(Effect.orDie),
      sweepExpired: sweepExpired(undefined).pipe(Effect.map((row) => row.n), Effect.orDie)
    } as const
  })
}) {}
