export { BrowserOrigin, ExternalSignInApi } from "@svc/core/api"
export { ATTEMPT_TTL, RECEIPT_TTL } from "./attempts.js"
export { BrowserOriginLive, ExternalSignInLive } from "./http.js"
export { ExternalSignInSettings, type ExternalSignInSettingsShape, PROVIDERS, type ProviderId } from "./settings.js"
