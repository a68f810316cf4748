/**
 * Query keys. Every Namespace-owned key starts with ["ns", namespaceId], so switching Namespace
 * changes every key: the previous Namespace's data is never shown for the new one.
 */
export const keys = {
  session: ["session"] as const,
  providers: ["providers"] as const,
  installation: ["installation"] as const,
  namespaces: ["namespaces"] as const,
  /** The caller's permissions on the Installation, a Namespace or an Agent. */
  permissions: (ns?: string, agentId?: string) =>
    ns === undefined ? ["permissions"] as const : agentId === undefined ? ["ns", ns, "permissions"] as const : ["ns", ns, "agents", agentId, "permissions"] as const,
  namespace: (ns: string) => ["ns", ns] as const,
  agents: (ns: string) => ["ns", ns, "agents"] as const,
  agent: (ns: string, agentId: string) => ["ns", ns, "agents", agentId] as const,
  revisions: (ns: string, agentId: string) => ["ns", ns, "agents", agentId, "revisions"] as const,
  deployment: (ns: string, agentId: string, deploymentId: string) => ["ns", ns, "agents", agentId, "deployments", deploymentId] as const,
  workspaceFile: (ns: string, agentId: string, name: string) => ["ns", ns, "agents", agentId, "files", name] as const,
  secrets: (ns: string) => ["ns", ns, "secrets"] as const,
  configurations: (ns: string) => ["ns", ns, "configurations"] as const
}
