/**
 * Repository grants (SPEC 2.14): the permission contract of each profile and the fingerprint
 * that freezes an admitted grant. The API computes it at deploy, the credential service
 * recomputes it from its own registry at admission and refuses a grant whose fingerprint no
 * longer matches (the registry changed since deploy).
 */
import { createHash } from "node:crypto"
import type { NamespacePolicy, RegistryRepository, RepositoryProfileName, RepositoryRegistry } from "../../config/installation/registry.js"

export type PermissionLevel = "read" | "write"
export type PermissionMap = Readonly<Record<string, PermissionLevel>>

const always: PermissionMap = { metadata: "read", checks: "read", statuses: "read" }

/**
 * Installation-token permissions per profile (UPSTREAMS.md). Administration, workflows, actions
 * and secrets are never requested.
 */
export const profilePermissions: Readonly<Record<RepositoryProfileName, PermissionMap>> = {
  "git-read": { ...always, contents: "read", pull_requests: "read", issues: "read" },
  "git-write": { ...always, contents: "write", pull_requests: "write", issues: "read" },
  "git-full": { ...always, contents: "write", pull_requests: "write", issues: "write" }
}

/** Which profiles include another: a session may narrow its grant's profile, never widen it. */
const rank: Readonly<Record<RepositoryProfileName, number>> = { "git-read": 0, "git-write": 1, "git-full": 2 }
export const profileIncludes = (granted: RepositoryProfileName, requested: RepositoryProfileName): boolean =>
  rank[granted] >= rank[requested]

/** Version of the permission contract inside the fingerprint; bump when the maps change. */
export const PERMISSION_CONTRACT = "permissions-v1"

const sortedKeys = (map: PermissionMap): Array<[string, PermissionLevel]> =>
  Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/**
 * SHA-256 over provider, App, installation, repository, maximum duration, Namespace, allowed
 * profiles, push-ref policy, selected profile and permission contract, as `sha256:<hex>`.
 */
export const grantFingerprint = (input: {
  readonly registry: RepositoryRegistry
  readonly repository: RegistryRepository
  readonly policy: NamespacePolicy
  readonly profile: RepositoryProfileName
}): string => {
  const canonical = JSON.stringify([
    input.registry.providerInstanceId,
    input.registry.appId,
    input.registry.installationId,
    input.repository.repositoryId,
    input.repository.repository,
    input.registry.maximumDurationSeconds,
    input.policy.namespaceId,
    [...input.policy.profiles].sort(),
    input.policy.pushRefAllowlist === undefined ? null : [...input.policy.pushRefAllowlist].sort(),
    input.profile,
    PERMISSION_CONTRACT,
    sortedKeys(profilePermissions[input.profile])
  ])
  return `sha256:${createHash("sha256").update(canonical).digest("hex")}`
}
