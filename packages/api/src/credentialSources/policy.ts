/** Which resource a credential source is to the authorization (DESIGN §10 `Policy`). */
import type { ResourceRef } from "@svc/core/iam"

export const credentialSourceRef = (namespaceId: string, sourceId: string) =>
  ({ kind: "credential_source", id: sourceId, namespaceId }) as const satisfies ResourceRef
