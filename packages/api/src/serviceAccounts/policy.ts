/** Which resource a service account is to the authorization (DESIGN §10 `Policy`). */
import type { ResourceRef } from "@svc/core/iam"

export const serviceAccountRef = (namespaceId: string, serviceAccountId: string): ResourceRef =>
  ({ kind: "service_account", id: serviceAccountId, namespaceId })
