/**
 * @svc/worker: the durable work engine (DESIGN §5) and, later, the reconcilers that run on it.
 */
export * from "./engine/index.js"
export { ReconcilersLive } from "./reconcilers.js"
export { NamespaceReconcilersLive, NamespaceWorkCodes, provisionNamespace, teardownNamespace } from "./namespaces/reconcilers.js"
export { AgentProvisionLive, provisionAgent, provisionStep, ProvisionWorkCodes } from "./agents/provision.js"
export { WorkerLive } from "./worker.js"
export { WorkOutboxLive } from "./outbox.js"
