export { AgentsApi } from "./api.js"
export { AgentsLive } from "./http.js"
