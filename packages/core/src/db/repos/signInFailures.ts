/**
 * The `sign_in_failures` table (migrations 0003, 0011): the sign-in throttle's reserved
 * attempts (SPEC 5.4), keyed by the digest of the normalized email and, behind a trusted proxy,
 * by the client address. Its queries keep their `SqlError`: sign-in fails closed with its own
 * 503 when the database is unreachable.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/** One key's attempts in the window; exactly one of `email_digest`, `client_address` is set. */
const WindowKey = Schema.Struct({
  email_digest: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  client_address: Schema.NullOr(Schema.String),
  window_seconds: Schema.Int,
  limit: Schema.Int
})

export const WindowCountRow = Schema.Struct({
  attempts: Schema.Int,
  evaluations: Schema.Int,
  /** Seconds until the `limit`-th latest evaluation leaves the window; null below the limit. */
  retry_after: Schema.NullOr(Schema.Int)
})
export type WindowCountRow = typeof WindowCountRow.Type

const InsertFailure = Schema.Struct({
  email_digest: Schema.Uint8ArrayFromSelf,
  client_address: Schema.NullOr(Schema.String),
  evaluated: Schema.Boolean
})

export class SignInFailuresRepo extends Effect.Service<SignInFailuresRepo>()("@svc/core/SignInFailuresRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** A transaction-scoped advisory lock on one throttle key, across every replica. */
    const lockKey = SqlSchema.void({
      Request: Schema.String,
      execute: (key) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`
    })

    const countWindow = SqlSchema.single({
      Request: WindowKey,
      Result: WindowCountRow,
      execute: (key) => {
        const filter = key.email_digest !== null
          ? sql`email_digest = ${key.email_digest}`
          : sql`client_address = ${key.client_address}`
        return sql`
          WITH recent AS (
            SELECT at, evaluated FROM sign_in_failures
            WHERE ${filter} AND at > now() - make_interval(secs => ${key.window_seconds})
          )
          SELECT
            (SELECT count(*)::int FROM recent) AS attempts,
            (SELECT count(*)::int FROM recent WHERE evaluated) AS evaluations,
            (SELECT ceil(extract(epoch FROM (at + make_interval(secs => ${key.window_seconds}) - now())))::int
             FROM recent WHERE evaluated ORDER BY at DESC OFFSET ${key.limit - 1} LIMIT 1) AS retry_after
        `
      }
    })

    /** Records an attempt as a failure until it is released. */
    const insert = SqlSchema.single({
      Request: InsertFailure,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (row) => sql`
        INSERT INTO sign_in_failures (email_digest, client_address, evaluated)
        VALUES (${row.email_digest}, ${row.client_address}, ${row.evaluated})
        RETURNING id::text AS id
      `
    })

    /** Removes attempts older than `retention` (a PostgreSQL interval). */
    const prune = SqlSchema.void({
      Request: Schema.String,
      execute: (retention) => sql`DELETE FROM sign_in_failures WHERE at < now() - ${retention}::interval`
    })

    const release = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`DELETE FROM sign_in_failures WHERE id = ${id}::bigint`
    })

    return {
      lockKey: (key: string) => lockKey(key).pipe(Effect.catchTag("ParseError", Effect.die)),
      countWindow: (key: typeof WindowKey.Type) =>
        countWindow(key).pipe(Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })),
      insert: (row: typeof InsertFailure.Type) =>
        insert(row).pipe(Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })),
      prune: (retention: string) => prune(retention).pipe(Effect.catchTag("ParseError", Effect.die)),
      release: (id: string) => release(id).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}
