export { CreateNamespace, Namespace, NamespaceList, NamespacesApi, NamespaceStatus } from "@svc/core/api"
export { NamespacesLive } from "./http.js"
