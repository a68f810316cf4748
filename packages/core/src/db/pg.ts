import { Duration, Effect, Layer, type Redacted, Schedule } from "effect"
import { pgPoolLayer } from "./pgPool.js"

export interface DatabaseOptions {
  readonly url: Redacted.Redacted<string>
  /** Shown in pg_stat_activity: which process holds a connection. */
  readonly applicationName: string
  readonly maxConnections?: number | undefined
  /** How long a starting process waits for the database before giving up (default 60 s). */
  readonly startupPatience?: Duration.DurationInput | undefined
}

/**
 * The PostgreSQL client of a process. A database that is not up yet (the usual race when a
 * whole deployment starts at once) is waited for with backoff, each failure logged; after the
 * patience runs out the process stops with the cause. Later outages surface as 503s and the
 * pool reconnects by itself.
 */
export const databaseLayer = (options: DatabaseOptions) => {
  const patience = Duration.decode(options.startupPatience ?? Duration.seconds(60))
  return pgPoolLayer({
    url: options.url,
    applicationName: options.applicationName,
    maxConnections: options.maxConnections ?? 10,
    connectTimeout: Duration.seconds(5),
    idleTimeout: Duration.seconds(30)
  }).pipe(
    Layer.tapErrorCause(() => Effect.logWarning("database not reachable yet; retrying")),
    Layer.retry(
      Schedule.exponential(Duration.millis(250), 2).pipe(
        Schedule.union(Schedule.spaced(Duration.seconds(5))),
        Schedule.upTo(patience)
      )
    )
  )
}
