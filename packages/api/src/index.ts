export { SvcApi } from "./api.js"
export { ApiGroupsLive, ApiServerLive } from "./apiServer.js"
export { HealthLive } from "./health/http.js"
export { listen, type ServerOptions } from "./server.js"
