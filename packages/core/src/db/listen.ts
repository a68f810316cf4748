/**
 * LISTEN on a connection of its own that comes back after it is lost. `PgClient.listen` keeps one
 * connection for the process's life and swallows its errors: after PostgreSQL restarts, fails
 * over, or a proxy drops the idle connection, it never delivers again and says nothing. Here a
 * lost connection is logged and reconnected with backoff, and every (re)connection announces
 * `Listening`, because notifications sent while nobody listened are gone: the consumer catches
 * up (re-reads, or looks for due work) on each one.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Queue, Redacted, Schedule, type Scope, Stream } from "effect"
import pg from "pg"

export type ListenEvent =
  | { readonly _tag: "Listening" }
  | { readonly _tag: "Notification"; readonly payload: string }

const LISTENING: ListenEvent = { _tag: "Listening" }

const clientConfig = (config: PgClient.PgClientConfig, applicationName: string): pg.ClientConfig => ({
  ...(config.url === undefined ? {} : { connectionString: Redacted.value(config.url) }),
  ...(config.host === undefined ? {} : { host: config.host }),
  ...(config.port === undefined ? {} : { port: config.port }),
  ...(config.database === undefined ? {} : { database: config.database }),
  ...(config.username === undefined ? {} : { user: config.username }),
  ...(config.password === undefined ? {} : { password: Redacted.value(config.password) }),
  ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
  application_name: applicationName,
  // A peer that vanished without closing (a dropped route, a failed-over host) is noticed by TCP
  // keepalive; an idle LISTEN connection sends nothing else that would notice it.
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000
})

const connectionLost = (cause: unknown) => ({ _tag: "ConnectionLost" as const, cause })

/** One connection's life: connect, LISTEN, announce `Listening`, forward until it is lost. */
const listenOnce = (
  config: pg.ClientConfig,
  channel: string,
  offer: (event: ListenEvent) => void
): Effect.Effect<never, ReturnType<typeof connectionLost>, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new pg.Client(config)
          // Registered before connect and kept until the end: an error with no listener would
          // end the process.
          client.on("error", () => undefined)
          await client.connect()
          return client
        },
        catch: connectionLost
      }),
      (client) => Effect.promise(() => client.end().catch(() => undefined)).pipe(Effect.timeoutOption(Duration.seconds(1)))
    )
    return yield* Effect.async<never, ReturnType<typeof connectionLost>>((resume) => {
      const lost = (cause: unknown) => resume(Effect.fail(connectionLost(cause)))
      client.on("notification", (message) => {
        if (message.channel === channel && message.payload) offer({ _tag: "Notification", payload: message.payload })
      })
      client.on("error", lost)
      client.on("end", () => lost(new Error("the listen connection ended")))
      client.query(`LISTEN ${client.escapeIdentifier(channel)}`).then(() => offer(LISTENING), lost)
    })
  })

/**
 * Hands every event on `channel` to `onEvent`, synchronously from the connection's callback, on a
 * connection named `applicationName` (pg_stat_activity), until the scope closes. It never fails:
 * a lost connection is logged and made again (200 ms doubling, then every 5 s), and each
 * connection starts with `Listening`. For a consumer whose reaction is itself synchronous (the
 * work engine waking a slot), this skips the queue and stream hops `listenReconnecting` adds.
 */
export const listenReconnectingWith = (
  channel: string,
  applicationName: string,
  onEvent: (event: ListenEvent) => void
): Effect.Effect<void, never, PgClient.PgClient | Scope.Scope> =>
  Effect.flatMap(PgClient.PgClient, ({ config }) =>
    Effect.scoped(listenOnce(clientConfig(config, applicationName), channel, onEvent)).pipe(
      Effect.tapError((error) => Effect.logWarning(`LISTEN ${channel} lost; reconnecting`, error.cause)),
      Effect.retry(Schedule.exponential(Duration.millis(200), 2).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))),
      Effect.interruptible,
      Effect.forkScoped,
      Effect.asVoid
    )
  )

/**
 * The notifications on `channel`, as `listenReconnectingWith` delivers them, for as long as the
 * stream is consumed.
 */
export const listenReconnecting = (
  channel: string,
  applicationName: string
): Stream.Stream<ListenEvent, never, PgClient.PgClient> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const events = yield* Queue.unbounded<ListenEvent>()
      // From the pg client's callbacks; an unbounded queue accepts at once.
      yield* listenReconnectingWith(channel, applicationName, (event) => void Queue.unsafeOffer(events, event))
      return Stream.fromQueue(events)
    })
  )
