export { PresetsApi } from "@svc/core/api"
export { PresetsLive } from "./http.js"
