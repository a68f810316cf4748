/**
 * The durable work outbox (DESIGN §5) beside its table (migration `0001_work_items`): enqueue in
 * the caller's transaction, the status read, the row schema and the engine's codes. The API
 * writes and reads items through it; `@svc/worker`'s engine claims and runs them.
 */
export { WorkCodes, WorkMessages } from "./codes.js"
export { DEFAULT_DEADLINE, enqueue, type Enqueued, type EnqueueOptions, WORK_CHANNEL } from "./enqueue.js"
export { decodeWorkItem, type LastAttempt, toWorkItem, type WorkItem, workItemColumns, WorkItemRow, WorkState } from "./item.js"
export { WorkOutbox, WorkOutboxLive } from "./outbox.js"
export { getWorkItem } from "./status.js"
export { DEPLOYMENT_CHANNEL } from "./deploymentChannel.js"
