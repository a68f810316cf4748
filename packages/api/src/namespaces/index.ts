export { CreateNamespace, Namespace, NamespaceList, NamespacesApi, NamespaceStatus } from "./api.js"
export { NamespacesLive } from "./http.js"
