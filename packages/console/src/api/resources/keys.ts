/**
 * Query keys of the resource pages, beside the shared `keys` (whose configurations, secrets and
 * installation keys these pages share). Namespace-owned keys start with ["ns", namespaceId].
 */
export const resourceKeys = {
  configuration: (ns: string, id: string) => ["ns", ns, "configurations", id] as const,
  presets: (ns: string) => ["ns", ns, "presets"] as const,
  preset: (ns: string, id: string) => ["ns", ns, "presets", id] as const,
  serviceAccounts: (ns: string) => ["ns", ns, "service-accounts"] as const,
  serviceAccount: (ns: string, id: string) => ["ns", ns, "service-accounts", id] as const,
  credentialSources: (ns: string) => ["ns", ns, "credential-sources"] as const,
  credentialSource: (ns: string, id: string) => ["ns", ns, "credential-sources", id] as const,
  roles: (ns: string) => ["ns", ns, "iam", "roles"] as const,
  bindings: (ns: string) => ["ns", ns, "iam", "bindings"] as const,
  namespacePrincipals: (ns: string) => ["ns", ns, "iam", "service-principals"] as const,
  installationPrincipals: ["service-principals"] as const,
  account: (userId: string) => ["accounts", userId] as const,
  recovery: ["recovery"] as const
}
