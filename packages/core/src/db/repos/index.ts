/**
 * One repository per table (DESIGN §10): `SqlSchema` queries with row schemas, shared by the
 * API and the worker. Repositories die on database errors except where a caller maps a
 * constraint (a unique name) to a SPEC code; a lost database then surfaces as 503.
 */
export * from "./accounts.js"
export * from "./agentProvisioning.js"
export * from "./agents.js"
export * from "./bindings.js"
export * from "./configurations.js"
export * from "./installation.js"
export * from "./namespaces.js"
export * from "./presets.js"
export * from "./principals.js"
export * from "./recovery.js"
export * from "./revisions.js"
export * from "./roles.js"
export * from "./secrets.js"
export * from "./serviceKeys.js"
export * from "./sessions.js"
export * from "./signInAttempts.js"
export * from "./signInFailures.js"
export * from "./workItems.js"
export * from "./idempotencyKeys.js"
export * from "./auditEvents.js"
export * from "./serviceAccounts.js"
export * from "./credentialSources.js"
export * from "./repositorySessions.js"
export * from "./agentRepositorySessions.js"
