/** What each process's main.ts starts from. Node-only. */
export { processLayer, requireDatabaseUrl, startupConfig } from "./startup.js"
export { selectDrivers } from "./drivers.js"
