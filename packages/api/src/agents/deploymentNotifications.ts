/**
 * The API's one `LISTEN svc_deployment` connection (migration 0014 sends on it), fanned out to
 * every open deployment event stream through a PubSub. Its own `pg` connection, not
 * `PgClient.listen`: that one keeps its connection for good and ignores its errors, so a lost
 * connection would go unnoticed. Here a lost connection is reconnected with backoff, and every
 * (re)connect publishes `Resync`, because notifications sent while nobody listened are gone:
 * each stream then re-reads its status, so no terminal event is lost.
 */
import { PgClient } from "@effect/sql-pg"
import { DEPLOYMENT_CHANNEL } from "@svc/core/work"
import { Duration, Effect, PubSub, Redacted, Schedule, type Scope } from "effect"
import pg from "pg"

/** What the listener tells the streams: one deployment changed, or re-read everything. */
export type DeploymentSignal =
  | { readonly _tag: "Changed"; readonly deploymentId: string }
  | { readonly _tag: "Resync" }

const clientConfig = (config: PgClient.PgClientConfig): pg.ClientConfig => ({
  ...(config.url === undefined ? {} : { connectionString: Redacted.value(config.url) }),
  ...(config.host === undefined ? {} : { host: config.host }),
  ...(config.port === undefined ? {} : { port: config.port }),
  ...(config.database === undefined ? {} : { database: config.database }),
  ...(config.username === undefined ? {} : { user: config.username }),
  ...(config.password === undefined ? {} : { password: Redacted.value(config.password) }),
  ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
  application_name: "svc-api-deployment-events"
})

const connectionLost = (cause: unknown) => ({ _tag: "ConnectionLost" as const, cause })

export class DeploymentNotifications extends Effect.Service<DeploymentNotifications>()("@svc/api/DeploymentNotifications", {
  scoped: Effect.gen(function* () {
    const { config } = yield* PgClient.PgClient
    const signals = yield* PubSub.unbounded<DeploymentSignal>()
    // From the pg client's callbacks; an unbounded PubSub accepts at once, so this never blocks.
    const offer = (signal: DeploymentSignal) => Effect.runSync(PubSub.publish(signals, signal))

    /** One connection's life: connect, LISTEN, announce `Resync`, forward until it fails. */
    const listenOnce: Effect.Effect<never, ReturnType<typeof connectionLost>, Scope.Scope> = Effect.gen(function* () {
      const client = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new pg.Client(clientConfig(config))
            // Registered before connect: an error on an idle connection must not crash the process.
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
          if (message.channel === DEPLOYMENT_CHANNEL && message.payload) {
            offer({ _tag: "Changed", deploymentId: message.payload })
          }
        })
        client.on("error", lost)
        client.on("end", () => lost(new Error("the listen connection ended")))
        client.query(`LISTEN ${DEPLOYMENT_CHANNEL}`).then(
          () => offer({ _tag: "Resync" }),
          lost
        )
      })
    }).pipe(Effect.scoped)

    yield* listenOnce.pipe(
      Effect.tapError((error) => Effect.logWarning("deployment LISTEN lost; reconnecting", error.cause)),
      Effect.retry(Schedule.exponential(Duration.millis(200), 2).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))),
      Effect.annotateLogs({ fiber: "deployment.listen" }),
      Effect.interruptible,
      Effect.forkScoped
    )

    return {
      /** A subscription for the caller's scope: take signals from it until the scope closes. */
      subscribe: PubSub.subscribe(signals)
    }
  })
}) {}
