import { NamespacesRepo } from "@svc/core/db"
import { type Duration, Layer } from "effect"
import { RecoverySweepLive } from "./agents/recovery.js"
import { WorkEngine, WorkHandlers, type WorkEngineOptions } from "./engine/index.js"
import { ReconcilersLive } from "./reconcilers.js"
import { IdempotencySweepLive } from "./idempotency/sweep.js"
import { CredentialSourceSweepLive } from "./credentialSources/sweep.js"
import { RepositoryCleanupSweepLive } from "./repositories/cleanup.js"

export interface WorkerOptions extends WorkEngineOptions {
  /** How often the Agent recovery sweep runs after the one at start (default 1 minute). */
  readonly recoveryInterval?: Duration.DurationInput | undefined
  /** How often the repository-session cleanup sweep runs after the one at start (default 1 minute). */
  readonly repositoryCleanupInterval?: Duration.DurationInput | undefined
}

/**
 * The work engine with every reconciler registered, the Agent recovery sweep and the expired
 * idempotency keys' sweep: needs
 * SqlClient and PgClient, the process's configuration, and the Compute and Secret Drivers its
 * main.ts selects. The repositories the reconcilers share with the API are built here from the
 * same SqlClient.
 */
export const WorkerLive = (options?: WorkerOptions) =>
  Layer.mergeAll(
    WorkEngine.layer(options),
    ReconcilersLive,
    RecoverySweepLive(options?.recoveryInterval),
    IdempotencySweepLive(),
    CredentialSourceSweepLive(),
    RepositoryCleanupSweepLive(options?.repositoryCleanupInterval)
  ).pipe(
    Layer.provide(WorkHandlers.layer),
    Layer.provide(NamespacesRepo.Default)
  )
