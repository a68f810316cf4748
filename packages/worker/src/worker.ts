import { Layer } from "effect"
import { WorkEngine, WorkHandlers, type WorkEngineOptions } from "./engine/index.js"
import { ReconcilersLive } from "./reconcilers.js"

/** The work engine with every reconciler registered: needs SqlClient and PgClient. */
export const WorkerLive = (options?: WorkEngineOptions) =>
  Layer.mergeAll(WorkEngine.layer(options), ReconcilersLive).pipe(Layer.provide(WorkHandlers.layer))
