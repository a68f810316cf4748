export { IssuedServiceKey, IssueServiceKeyRequest, RevokedServiceKey, ServiceKeyName, ServiceKeysApi } from "@svc/core/api"
export { ServiceKeysLive } from "./http.js"
export { issueServiceKey, revokeServiceKey } from "./service.js"
export { insertServiceKey, type NewServiceKey, removeServiceKey, type StoredServiceKey } from "./store.js"
