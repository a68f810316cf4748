import * as Compute from "@svc/core/drivers/compute"
import { secretDriverFromConfiguration } from "@svc/core/drivers/secret"
import { Layer } from "effect"
import { WorkEngine, WorkHandlers, type WorkEngineOptions } from "./engine/index.js"
import { ReconcilersLive } from "./reconcilers.js"

/**
 * The work engine with every reconciler registered: needs SqlClient and PgClient, and the
 * process's configuration (`InstallationConfiguration` selects the Compute Driver, whose `local`
 * implementation lives under `ProcessConfiguration.dataDir`).
 */
export const WorkerLive = (options?: WorkEngineOptions) =>
  Layer.mergeAll(WorkEngine.layer(options), ReconcilersLive).pipe(
    Layer.provide(WorkHandlers.layer),
    Layer.provide(Compute.layerFromConfiguration),
    Layer.provide(secretDriverFromConfiguration)
  )
