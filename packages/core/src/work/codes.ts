/**
 * The codes the work engine itself records on an item's `lastAttempt`, with their fixed, safe
 * messages. Here, beside the outbox, because readers of an item's status (the API's deployment
 * and provisioning status) tell these codes apart as well as the engine that writes them.
 */
export const WorkCodes = {
  SUCCEEDED: "SUCCEEDED",
  INTERNAL_ERROR: "INTERNAL_ERROR",
  LEASE_EXPIRED: "LEASE_EXPIRED",
  DEADLINE_EXCEEDED: "DEADLINE_EXCEEDED",
  INVALID_PAYLOAD: "INVALID_PAYLOAD"
} as const

/** The fixed, safe message recorded with each engine code. */
export const WorkMessages: { readonly [K in keyof typeof WorkCodes]: string } = {
  SUCCEEDED: "The attempt succeeded.",
  INTERNAL_ERROR: "The attempt failed with an internal error.",
  LEASE_EXPIRED: "The worker running the attempt stopped renewing its lease.",
  DEADLINE_EXCEEDED: "The work did not complete before its deadline.",
  INVALID_PAYLOAD: "The work item's payload does not match its kind."
}
