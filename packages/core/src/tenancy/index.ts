/** Tenancy: the Namespace creation path shared by bootstrap and `POST /namespaces`. */
export {
  type CreatedNamespace,
  createNamespace,
  NAMESPACE_PROVISION,
  NamespaceNameTaken,
  type NewNamespace,
  WorkOutbox
} from "./namespaces.js"
