export { ConfigurationsApi } from "./api.js"
export { configurationReferrer } from "./configurations.js"
export { ConfigurationsLive } from "./http.js"
