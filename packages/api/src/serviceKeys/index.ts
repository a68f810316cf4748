export { IssuedServiceKey, IssueServiceKeyRequest, RevokedServiceKey, ServiceKeyName, ServiceKeysApi } from "@svc/core/api"
export { ServiceKeysLive } from "./http.js"
export { ServiceKeys } from "./service.js"
export { newServiceKey } from "./store.js"
