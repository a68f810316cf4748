export { AuditApiLive } from "./http.js"
export { AuditQueries } from "./service.js"
