import { Layer } from "effect"

/**
 * The reconcilers this worker runs, one `WorkHandler.layer` per kind of work. Capabilities add
 * theirs here as they land (Namespace provisioning, deployments, ...).
 */
export const ReconcilersLive = Layer.empty
