/**
 * `svc api`: one API replica of the production split. Any number may run against one database.
 */
import { NodeRuntime } from "@effect/platform-node"
import { databaseLayer } from "@svc/core/db"
import { processLayer, requireDatabaseUrl, selectDrivers, startupConfig } from "@svc/core/runtime"
import { metricsEndpointLayer } from "@svc/core/observability"
import { Effect, Layer } from "effect"
import { ApiServerLive } from "./apiServer.js"
import { serverOptions } from "./serverOptions.js"

const ApiProcess = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* startupConfig
    const url = yield* requireDatabaseUrl(config, "api")
    const drivers = yield* selectDrivers(config)
    return ApiServerLive(serverOptions(config)).pipe(
      Layer.provide(drivers),
      Layer.provide(databaseLayer({ url, applicationName: "svc-api" })),
      // The Prometheus endpoint (SVC_METRICS_PORT) starts with the process's logger.
      Layer.merge(metricsEndpointLayer(config.process.telemetry)),
      Layer.provide(processLayer(config))
    )
  })
)

ApiProcess.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
