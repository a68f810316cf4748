export { ConfigurationsApi } from "@svc/core/api"
export { ConfigurationsLive } from "./http.js"
export { configurationRef } from "./policy.js"
export { Configurations } from "./service.js"
