export { CredentialSourcesApi } from "@svc/core/api"
export { CredentialSourcesLive } from "./http.js"
export { credentialSourceRef } from "./policy.js"
export { CredentialSources } from "./service.js"
