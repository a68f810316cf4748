/**
 * `svc bootstrap`: the one-shot initializer of the production split (SPEC 5.6). Run it after
 * `svc migrate` and before the API and workers; it exits 0 when the Installation was created
 * or already existed, and non-zero (after auditing `installation.bootstrap-failed`) otherwise.
 */
import { NodeRuntime } from "@effect/platform-node"
import { databaseLayer } from "@svc/core/db"
import { processLayer, requireDatabaseUrl, startupConfig } from "@svc/core/runtime"
import { WorkOutboxLive } from "@svc/core/work"
import { Effect, Layer } from "effect"
import { BootstrapReposLive, runBootstrap } from "./initializer.js"
import { bootstrapInput } from "./settings.js"

const program = Effect.gen(function* () {
  const config = yield* startupConfig
  const url = yield* requireDatabaseUrl(config, "bootstrap")
  const input = yield* bootstrapInput(config)
  yield* runBootstrap(input).pipe(
    Effect.provide(
      Layer.mergeAll(BootstrapReposLive, WorkOutboxLive).pipe(
        Layer.provideMerge(databaseLayer({ url, applicationName: "svc-bootstrap" })),
        Layer.provideMerge(processLayer(config))
      )
    )
  )
})

// The failure is logged (without credentials) by the initializer itself.
NodeRuntime.runMain(program, { disablePrettyLogger: true, disableErrorReporting: true })
