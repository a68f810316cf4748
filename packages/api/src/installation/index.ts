export { InstallationApi } from "./api.js"
export { backendsOf, capabilitiesOf } from "./capabilities.js"
export { InstallationLive } from "./http.js"
