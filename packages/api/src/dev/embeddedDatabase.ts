import { startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { Data, Effect, Redacted } from "effect"
import * as path from "node:path"

export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{ readonly message: string }> {}

/**
 * A real PostgreSQL under `<dataDir>/postgres` for `npm start`, stopped when the scope closes
 * (after everything that uses it). Returns the URL of its `svc` database.
 */
export const embeddedDatabase = (dataDir: string) =>
  Effect.gen(function* () {
    const dir = path.join(dataDir, "postgres")
    yield* Effect.logInfo("starting the embedded PostgreSQL").pipe(Effect.annotateLogs({ dir }))
    const server = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => startEmbeddedPostgres({ dir }),
        catch: (cause) => new EmbeddedDatabaseError({ message: cause instanceof Error ? cause.message : String(cause) })
      }),
      (server) =>
        Effect.promise(() => server.stop()).pipe(Effect.zipRight(Effect.logInfo("embedded PostgreSQL stopped")))
    )
    for (const notice of server.notices) yield* Effect.logWarning(notice)
    const url = yield* Effect.tryPromise({
      try: () => server.ensureDatabase("svc"),
      catch: (cause) =>
        new EmbeddedDatabaseError({ message: `could not create the svc database: ${cause instanceof Error ? cause.message : String(cause)}` })
    })
    yield* Effect.logInfo("embedded PostgreSQL is up").pipe(Effect.annotateLogs({ port: server.port }))
    return Redacted.make(url)
  })
