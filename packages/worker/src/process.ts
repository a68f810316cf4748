/**
 * The `svc worker` process as a Layer: configuration, the selected Drivers, the database, the
 * metrics endpoint and the work engine. `compute` replaces the configured Compute Driver (the
 * kubernetes tests' worker processes reach gateways through the test node, testing/kubernetes).
 */
import { loadOrExit, type StartupConfig } from "@svc/core/config"
import { databaseLayer } from "@svc/core/db"
import type { ComputeDriver } from "@svc/core/drivers/compute"
import { metricsEndpointLayer } from "@svc/core/observability"
import { processLayer, requireDatabaseUrl, selectDrivers, startupConfig } from "@svc/core/runtime"
import { Effect, Layer } from "effect"
import { WorkerConfig } from "./settings.js"
import { WorkerLive } from "./worker.js"

export const workerProcess = (compute?: (config: StartupConfig) => Effect.Effect<Layer.Layer<ComputeDriver>>) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* startupConfig
      const url = yield* requireDatabaseUrl(config, "worker")
      const options = yield* loadOrExit(WorkerConfig)
      const drivers = yield* selectDrivers(config)
      const substitute = compute === undefined ? Layer.empty : yield* compute(config)
      return WorkerLive(options).pipe(
        Layer.provide(substitute),
        Layer.provide(drivers),
        Layer.provide(databaseLayer({ url, applicationName: "svc-worker" })),
        // The Prometheus endpoint (SVC_METRICS_PORT) starts with the process's logger.
        Layer.merge(metricsEndpointLayer(config.process.telemetry)),
        Layer.provide(processLayer(config))
      )
    })
  )
