/** Which resource an Agent call is about, and so which permission it needs (DESIGN §10 `Policy`). */
import type { ResourceRef } from "@svc/core/iam"

export const agentRef = (namespaceId: string, agentId: string) => ({ kind: "agent", id: agentId, namespaceId }) as const satisfies ResourceRef

export const revisionRef = (namespaceId: string, revisionId: string) =>
  ({ kind: "agent_revision", id: revisionId, namespaceId }) as const satisfies ResourceRef

export const provisioningRef = (namespaceId: string, workId: string) =>
  ({ kind: "provisioning", id: workId, namespaceId }) as const satisfies ResourceRef
