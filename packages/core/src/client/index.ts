/**
 * `@svc/core/client`: the typed client of the HTTP contract (`@svc/core/api`). Browser-safe:
 * it imports only `@effect/platform`, `effect` and the contract, never `node:*`.
 */
export { type Client, type ClientOptions, layer, layerFetch, make, SvcClient } from "./client.js"
export { Credentials } from "./credentials.js"
export { type DeploymentRef, type ServerSentEvent, serverSentEvents, watchDeploymentEvents } from "./deploymentEvents.js"
