/**
 * Which resource a Namespace is to the authorization (DESIGN §10 `Policy`). The ref itself stays
 * in `iam/access.ts` for now, where every Namespace-scoped feature already takes it from.
 */
export { namespaceRef } from "../iam/access.js"
