import { NamespacesRepo } from "@svc/core/db"
import * as Compute from "@svc/core/drivers/compute"
import { secretDriverFromConfiguration } from "@svc/core/drivers/secret"
import { type Duration, Layer } from "effect"
import { RecoverySweepLive } from "./agents/recovery.js"
import { WorkEngine, WorkHandlers, type WorkEngineOptions } from "./engine/index.js"
import { ReconcilersLive } from "./reconcilers.js"

export interface WorkerOptions extends WorkEngineOptions {
  /** How often the Agent recovery sweep runs after the one at start (default 1 minute). */
  readonly recoveryInterval?: Duration.DurationInput | undefined
}

/**
 * The work engine with every reconciler registered, and the Agent recovery sweep: needs
 * SqlClient and PgClient, and the process's configuration (`InstallationConfiguration` selects
 * the Compute Driver, whose `local` implementation lives under `ProcessConfiguration.dataDir`).
 * The repositories the reconcilers share with the API are built here from the same SqlClient.
 */
export const WorkerLive = (options?: WorkerOptions) =>
  Layer.mergeAll(WorkEngine.layer(options), ReconcilersLive, RecoverySweepLive(options?.recoveryInterval)).pipe(
    Layer.provide(WorkHandlers.layer),
    Layer.provide(NamespacesRepo.Default),
    Layer.provide(Compute.layerFromConfiguration),
    Layer.provide(secretDriverFromConfiguration)
  )
