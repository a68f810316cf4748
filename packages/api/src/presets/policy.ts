/** Which resource a Preset is to the authorization (DESIGN §10 `Policy`). */
import type { ResourceRef } from "@svc/core/iam"

export const presetRef = (namespaceId: string, presetId: string): ResourceRef =>
  ({ kind: "preset", id: presetId, namespaceId })
