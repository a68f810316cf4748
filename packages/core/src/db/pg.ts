import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import Pg from "pg"

export interface DatabaseOptions {
  readonly url: Redacted.Redacted<string>
  /** Shown in pg_stat_activity: which process holds a connection. */
  readonly applicationName: string
  readonly maxConnections?: number | undefined
  /** How long a starting process waits for the database before giving up (default 60 s). */
  readonly startupPatience?: Duration.DurationInput | undefined
}

/**
 * No statement of ours is ever cancelled with `pg_cancel_backend`. `@effect/sql-pg` answers an
 * interrupted statement (a client that disconnected, a lost lease, a shutdown) by sending
 * `pg_cancel_backend(pid)` from another connection, and a statement that completes meanwhile
 * releases its connection to the pool first: the cancel then lands on whatever the next borrower
 * runs there, which fails with "canceling statement due to user request" (a 503 for an innocent
 * request). PostgreSQL's cancel names a backend, not a statement, so it cannot be made safe from
 * outside; without a process id the library sends none. An interrupted statement then finishes
 * on the server (ours are short; `statement_timeout` bounds any other) and the `pg` client queues
 * the next borrower's statement behind it, so no statement is cut short but the one interrupted
 * fiber stops waiting at once. docs/decisions/http-pipeline.md "Client disconnects".
 */
const withoutCancellation = (client: Pg.PoolClient) => {
  ;(client as { processID?: number | undefined }).processID = undefined
}

const pool = (options: DatabaseOptions) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new Pg.Pool({
          connectionString: Redacted.value(options.url),
          application_name: options.applicationName,
          max: options.maxConnections ?? 10,
          connectionTimeoutMillis: 5000,
          idleTimeoutMillis: 30000
        })
        // Errors of idle clients are the pool's to handle (it drops them); without a listener they would crash the process.
        pool.on("error", () => undefined)
        pool.on("connect", withoutCancellation)
        try {
          await pool.query("SELECT 1")
        } catch (cause) {
          await pool.end().catch(() => undefined)
          throw cause
        }
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }).pipe(Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => new SqlError({ message: "PgClient: Connection timed out" }) })),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(Duration.seconds(1)))
  )

/**
 * The PostgreSQL client of a process. A database that is not up yet (the usual race when a
 * whole deployment starts at once) is waited for with backoff, each failure logged; after the
 * patience runs out the process stops with the cause. Later outages surface as 503s and the
 * pool reconnects by itself.
 */
export const databaseLayer = (options: DatabaseOptions) => {
  const patience = Duration.decode(options.startupPatience ?? Duration.seconds(60))
  return PgClient.layerFromPool({ acquire: pool(options), applicationName: options.applicationName }).pipe(
    Layer.tapErrorCause(() => Effect.logWarning("database not reachable yet; retrying")),
    Layer.retry(
      Schedule.exponential(Duration.millis(250), 2).pipe(
        Schedule.union(Schedule.spaced(Duration.seconds(5))),
        Schedule.upTo(patience)
      )
    )
  )
}
