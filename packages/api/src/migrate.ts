/**
 * `svc migrate`: applies pending database migrations and exits. Safe to run from several
 * places at once (the Migrator locks its table).
 */
import { NodeRuntime } from "@effect/platform-node"
import { databaseLayer, Migrations } from "@svc/core/db"
import { processLayer, requireDatabaseUrl, startupConfig } from "@svc/core/runtime"
import { Effect, Layer } from "effect"

const program = Effect.gen(function* () {
  const config = yield* startupConfig
  const url = yield* requireDatabaseUrl(config, "migrate")
  return yield* Effect.gen(function* () {
    const applied = yield* Migrations.run
    yield* Effect.logInfo(applied.length === 0 ? "database schema is current" : "migrations applied").pipe(
      Effect.annotateLogs({ applied: applied.map(([id, name]) => `${id}_${name}`) })
    )
  }).pipe(
    Effect.provide(Layer.provideMerge(databaseLayer({ url, applicationName: "svc-migrate" }), processLayer(config)))
  )
})

NodeRuntime.runMain(program, { disablePrettyLogger: true })
