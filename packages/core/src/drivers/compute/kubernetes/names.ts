/**
 * Names and labels of what the driver creates (DESIGN §14). Kubernetes names are derived from
 * our ids by hashing, so they are valid DNS labels of a fixed length and never collide across
 * Namespaces; labels carry the ids themselves (an `ns_`/`agt_`/`rev_` id is a valid label value).
 */
import { createHash } from "node:crypto"
import type { GatewayRef, NamespaceRuntime } from "../driver.js"

export const LABELS = {
  managedBy: "app.kubernetes.io/managed-by",
  component: "app.kubernetes.io/component",
  namespaceId: "svc/namespace-id",
  agentId: "svc/agent-id",
  revisionId: "svc/revision-id",
  /** On a namespace: "true" when we created it (and delete it), "false" for a bound `existingNamespace`. */
  owned: "svc/owned",
  /** Which service instance owns a gateway, when several share a cluster (`KubernetesComputeOptions.scope`). */
  scope: "svc/scope"
} as const

export const MANAGED_BY = "svc"

/** The gateway's port inside its Pod. */
export const GATEWAY_PORT = 18789

const shortHash = (value: string): string => createHash("sha256").update(value).digest("hex").slice(0, 16)

/** The Kubernetes namespace of a Namespace: the bound one, or `svc-<hash>` we own. */
export const kubernetesNamespace = (namespace: NamespaceRuntime): string =>
  namespace.existingNamespace ?? `svc-${shortHash(namespace.id)}`

/** The one name every object of an Agent shares (Deployment, Service, Secret, ConfigMap, PVC). */
export const agentObjectName = (agentId: string): string => `agent-${shortHash(agentId)}`

export const namespaceLabels = (namespace: NamespaceRuntime): Record<string, string> => ({
  [LABELS.managedBy]: MANAGED_BY,
  [LABELS.namespaceId]: namespace.id,
  [LABELS.owned]: namespace.existingNamespace === undefined ? "true" : "false"
})

export const agentLabels = (ref: Pick<GatewayRef, "namespaceId" | "agentId">): Record<string, string> => ({
  [LABELS.managedBy]: MANAGED_BY,
  [LABELS.component]: "gateway",
  [LABELS.namespaceId]: ref.namespaceId,
  [LABELS.agentId]: ref.agentId
})

export const revisionLabels = (ref: GatewayRef): Record<string, string> => ({
  ...agentLabels(ref),
  [LABELS.revisionId]: ref.revisionId
})
