import { type RunningPostgres, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { Data, Duration, Effect, Redacted, Schedule } from "effect"
import * as path from "node:path"

export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{ readonly message: string }> {}

const start = (dir: string, port?: number) =>
  Effect.tryPromise({
    try: () => startEmbeddedPostgres({ dir, ...(port === undefined ? {} : { port }) }),
    catch: (cause) => new EmbeddedDatabaseError({ message: cause instanceof Error ? cause.message : String(cause) })
  }).pipe(Effect.tap((server) => Effect.forEach(server.notices, (notice) => Effect.logWarning(notice), { discard: true })))

/**
 * Starts the server again, on the same port (the pool's URL names it), each time it exits on its
 * own: the OOM killer, a stray `kill`. The API and the worker answer 503 and poll meanwhile, and
 * use the server again once it is back. A start that fails is retried every few seconds, logged
 * each time, for as long as `svc start` runs.
 */
const superviseRestarts = (dir: string, current: { server: RunningPostgres }) =>
  Effect.gen(function* () {
    for (;;) {
      const exit = yield* Effect.promise(() => current.server.exited)
      yield* Effect.logError("the embedded PostgreSQL exited on its own; starting it again").pipe(
        Effect.annotateLogs({ code: exit.code, signal: exit.signal })
      )
      current.server = yield* start(dir, current.server.port).pipe(
        Effect.tapError((error) => Effect.logError("the embedded PostgreSQL did not start again; retrying", error.message)),
        Effect.retry(Schedule.exponential(Duration.millis(500), 2).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5)))))
      )
      yield* Effect.logInfo("embedded PostgreSQL is up again").pipe(Effect.annotateLogs({ port: current.server.port }))
    }
  })

/**
 * A real PostgreSQL under `<dataDir>/postgres` for `npm start`, restarted if it exits on its own,
 * and stopped when the scope closes (after everything that uses it). Returns the URL of its `svc`
 * database.
 */
export const embeddedDatabase = (dataDir: string) =>
  Effect.gen(function* () {
    const dir = path.join(dataDir, "postgres")
    yield* Effect.logInfo("starting the embedded PostgreSQL").pipe(Effect.annotateLogs({ dir }))
    const current = yield* Effect.acquireRelease(
      Effect.map(start(dir), (server) => ({ server })),
      (current) =>
        Effect.promise(() => current.server.stop()).pipe(Effect.zipRight(Effect.logInfo("embedded PostgreSQL stopped")))
    )
    const url = yield* Effect.tryPromise({
      try: () => current.server.ensureDatabase("svc"),
      catch: (cause) =>
        new EmbeddedDatabaseError({ message: `could not create the svc database: ${cause instanceof Error ? cause.message : String(cause)}` })
    })
    // Forked after the server's finalizer: interrupted before the server is stopped.
    yield* superviseRestarts(dir, current).pipe(Effect.annotateLogs({ fiber: "embedded-postgres" }), Effect.forkScoped)
    yield* Effect.logInfo("embedded PostgreSQL is up").pipe(Effect.annotateLogs({ port: current.server.port }))
    return Redacted.make(url)
  })
