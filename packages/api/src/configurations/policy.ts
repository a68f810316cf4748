/** Which resource a Configuration is to the authorization (DESIGN §10 `Policy`). */
import type { ResourceRef } from "@svc/core/iam"

export const configurationRef = (namespaceId: string, configurationId: string): ResourceRef =>
  ({ kind: "configuration", id: configurationId, namespaceId })
