import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { setStatementDeadline } from "./namedStatement.js"

/**
 * The `pg` pool behind a process's `PgClient`. `@effect/sql-pg` sends every statement unnamed, so
 * PostgreSQL parses and plans it on each execution. The hot statements that gain from a named
 * prepared statement are sent on this same pool by name (docs/decisions/performance.md): the
 * work engine's claims (`claimBatch.ts`), and the request path's credential and list page
 * statements (`queryNamed`, `runNamed`), and `enqueue` outside a transaction. Everything else goes
 * through `SqlClient`.
 */
export class PgPool extends Context.Tag("@svc/core/db/PgPool")<PgPool, pg.Pool>() {}

export interface PgPoolOptions {
  readonly url: Redacted.Redacted<string>
  /** Shown in pg_stat_activity: which process holds a connection. */
  readonly applicationName?: string | undefined
  readonly maxConnections?: number | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** How long a named statement on this pool waits for its answer (namedStatement.ts; default 10 s). */
  readonly statementDeadline?: Duration.DurationInput | undefined
}

/** Opens the pool and checks one connection (within `connectTimeout`); ends it with the scope. */
const acquirePool = (options: PgPoolOptions) => {
  const connectTimeout = Duration.decode(options.connectTimeout ?? Duration.seconds(5))
  return Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new pg.Pool({
        connectionString: Redacted.value(options.url),
        application_name: options.applicationName ?? "svc",
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: Duration.toMillis(connectTimeout),
        idleTimeoutMillis: options.idleTimeout === undefined ? undefined : Duration.toMillis(options.idleTimeout)
      })
      // An idle client's error (the server restarted) is the pool's to handle: it drops the client.
      // Without a listener, Node would end the process.
      pool.on("error", () => {})
      // A borrowed client is the borrower's to listen to, and `@effect/sql-pg` listens only for one
      // error while a statement runs. A server shutting down (a terminal's Ctrl-C reaches the
      // embedded PostgreSQL too) sends a FATAL and then closes the socket: two errors, the second
      // unheard. A dead client is not queryable, so the pool drops it when it comes back.
      pool.on("connect", (client) => client.on("error", () => {}))
      if (options.statementDeadline !== undefined) setStatementDeadline(pool, Duration.toMillis(Duration.decode(options.statementDeadline)))
      return pool
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  ).pipe(
    Effect.tap((pool) =>
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: connectTimeout,
          onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      )
    )
  )
}

/** `PgClient` and `SqlClient` over one pool, and the pool itself as `PgPool`. */
export const pgPoolLayer = (
  options: PgPoolOptions
): Layer.Layer<PgPool | PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  Layer.unwrapScoped(
    Effect.map(acquirePool(options), (pool) =>
      Layer.merge(
        Layer.succeed(PgPool, pool),
        PgClient.layerFromPool({ acquire: Effect.succeed(pool), applicationName: options.applicationName })
      )
    )
  )
