export { SecretsApi } from "@svc/core/api"
export { SecretsLive } from "./http.js"
export { secretReferrer } from "./secrets.js"
