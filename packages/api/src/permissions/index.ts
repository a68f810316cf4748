/** Permission probes for clients (extension): docs/decisions/console.md. */
export { PermissionsLive } from "./http.js"
export { Permissions } from "./service.js"
