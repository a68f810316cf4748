/**
 * @svc/worker: the durable work engine (DESIGN §5) and, later, the reconcilers that run on it.
 */
export * from "./engine/index.js"
export { ReconcilersLive } from "./reconcilers.js"
export { NamespaceReconcilersLive, NamespaceWorkCodes, provisionNamespace, teardownNamespace } from "./namespaces/reconcilers.js"
export { AgentProvisionLive, provisionAgent, provisionStep, ProvisionWorkCodes } from "./agents/provision.js"
export { WorkerLive, type WorkerOptions } from "./worker.js"
export { recoverAgent, RecoverySweepLive, sweepAgents } from "./agents/recovery.js"
export { deployRevision, stopAgent, teardownAgent } from "./agents/reconcilers.js"
export { WorkOutboxLive } from "@svc/core/work"
export { RuntimeOnDemandLive } from "./runtimeOnDemand.js"
export { WorkerConfig } from "./settings.js"
export { IdempotencySweepLive, sweepIdempotencyKeys } from "./idempotency/sweep.js"
export { CredentialSourceSweepLive, sweepCredentialSources } from "./credentialSources/sweep.js"
export { workerProcess } from "./process.js"
export { cleanupRepositorySession, RepositoryCleanupLive, RepositoryCleanupSweepLive, sweepRepositorySessions } from "./repositories/cleanup.js"
export { ensureRevisionSessions, REPOSITORY_CLEANUP, retireAgentSessions } from "./repositories/sessions.js"
