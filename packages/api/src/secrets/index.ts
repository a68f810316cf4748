export { SecretsApi } from "./api.js"
export { SecretsLive } from "./http.js"
export { secretReferrer } from "./secrets.js"
