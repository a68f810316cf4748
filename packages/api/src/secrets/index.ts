export { SecretsApi } from "@svc/core/api"
export { SecretsLive } from "./http.js"
export { secretRef } from "./policy.js"
export { Secrets } from "./service.js"
