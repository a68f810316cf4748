export { IamAccessBindingsApi, IamRolesApi, IamServicePrincipalsApi } from "@svc/core/api"
export { IamLive } from "./http.js"
export { isNamespacePermission } from "@svc/core/api"
