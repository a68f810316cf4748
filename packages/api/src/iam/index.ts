export { IamAccessBindingsApi, IamRolesApi, IamServicePrincipalsApi } from "./api.js"
export { IamLive } from "./http.js"
export { isNamespacePermission } from "./schemas.js"
