export { InstallationApi } from "@svc/core/api"
export { backendsOf, capabilitiesOf, diagnosticsOf } from "./capabilities.js"
export { InstallationLive } from "./http.js"
export { backendsRead, installationRead, InstallationService } from "./service.js"
