export { PresetsApi } from "./api.js"
export { PresetsLive } from "./http.js"
