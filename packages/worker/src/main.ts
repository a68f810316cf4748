/**
 * `svc worker`: one worker replica of the production split. Any number may run against one
 * database; they coordinate only through it.
 */
import { NodeRuntime } from "@effect/platform-node"
import { databaseLayer } from "@svc/core/db"
import { loadOrExit } from "@svc/core/config"
import { processLayer, requireDatabaseUrl, selectDrivers, startupConfig } from "@svc/core/runtime"
import { metricsEndpointLayer } from "@svc/core/observability"
import { Effect, Layer } from "effect"
import { WorkerConfig } from "./settings.js"
import { WorkerLive } from "./worker.js"

const WorkerProcess = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* startupConfig
    const url = yield* requireDatabaseUrl(config, "worker")
    const options = yield* loadOrExit(WorkerConfig)
    const drivers = yield* selectDrivers(config)
    return WorkerLive(options).pipe(
      Layer.provide(drivers),
      Layer.provide(databaseLayer({ url, applicationName: "svc-worker" })),
      // The Prometheus endpoint (SVC_METRICS_PORT) starts with the process's logger.
      Layer.merge(metricsEndpointLayer(config.process.telemetry)),
      Layer.provide(processLayer(config))
    )
  })
)

WorkerProcess.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
