/** Which resource a Secret is to the authorization (DESIGN §10 `Policy`). */
import type { ResourceRef } from "@svc/core/iam"

export const secretRef = (namespaceId: string, secretId: string) =>
  ({ kind: "secret", id: secretId, namespaceId }) as const satisfies ResourceRef
