export { AgentsApi } from "@svc/core/api"
export { AgentsLive } from "./http.js"
