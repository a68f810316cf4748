/**
 * The HTTP contract of the control plane (DESIGN §10): every HttpApi group, endpoint, request and
 * response schema, the middleware tags and the error unions. Browser-safe: no `node:*`, no
 * `Buffer`, no PostgreSQL, so a console, a CLI or another tool can import it and derive a typed
 * client (`@svc/core/client`). Handlers and middleware implementations live in `@svc/api`.
 */
export { SvcApi } from "./svcApi.js"
export { withApiErrors } from "./apiErrors.js"
export { API_TITLE, API_VERSION, documented } from "./documented.js"
export { openApiDocument, refineDocument } from "./openapi.js"
export * from "./middleware.js"
export * from "./idempotency.js"
export * from "./audit/api.js"
export * from "./audit/schemas.js"
export * from "./health/api.js"
export * from "./externalSignIn/api.js"
export * from "./accounts/api.js"
export * from "./accounts/schemas.js"
export * from "./serviceKeys/api.js"
export * from "./installation/api.js"
export * from "./namespaces/api.js"
export * from "./iam/api.js"
export * from "./iam/schemas.js"
export * from "./secrets/api.js"
export * from "./secrets/schemas.js"
export * from "./configurations/api.js"
export * from "./configurations/schemas.js"
export * from "./presets/api.js"
export * from "./presets/schemas.js"
export * from "./agents/api.js"
export * from "./agents/schemas.js"
export * from "./agents/fields.js"
export * from "./agents/provisionSchemas.js"
export * from "./permissions/api.js"
