import { Layer } from "effect"
import { AgentProvisionLive } from "./agents/provision.js"
import { AgentReconcilersLive } from "./agents/reconcilers.js"
import { NamespaceReconcilersLive } from "./namespaces/reconcilers.js"
import { RepositoryCleanupLive } from "./repositories/cleanup.js"

/**
 * The reconcilers this worker runs, one `WorkHandler.layer` per kind of work. Capabilities add
 * theirs here as they land (Namespace provisioning, deployments, ...). They need the Drivers
 * (`ComputeDriver`, `SecretDriver`), which the process's main.ts selects from its configuration.
 */
export const ReconcilersLive = Layer.mergeAll(NamespaceReconcilersLive, AgentReconcilersLive, AgentProvisionLive, RepositoryCleanupLive)
