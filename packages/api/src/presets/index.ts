export { PresetsApi } from "@svc/core/api"
export { PresetsLive } from "./http.js"
export { presetRef } from "./policy.js"
export { Presets } from "./service.js"
