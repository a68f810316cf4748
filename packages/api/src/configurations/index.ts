export { ConfigurationsApi } from "@svc/core/api"
export { configurationReferrer } from "./configurations.js"
export { ConfigurationsLive } from "./http.js"
