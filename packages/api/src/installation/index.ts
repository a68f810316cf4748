export { InstallationApi } from "./api.js"
export { backendsOf, capabilitiesOf, diagnosticsOf } from "./capabilities.js"
export { InstallationLive } from "./http.js"
