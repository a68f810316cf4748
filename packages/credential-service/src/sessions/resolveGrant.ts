/**
 * Checks a frozen grant against this service's own registry (SPEC 2.14): the repository must
 * still be approved for the Namespace with the grant's profile, and the fingerprint computed
 * now must equal the one frozen at deploy.
 */
import { approvedRepository, type RegistryRepository, type RepositoryRegistry } from "@svc/core/config"
import { grantFingerprint, type OpenSessionRequest, profileIncludes } from "@svc/core/drivers/repo"
import type { RepositoryProfileName } from "@svc/core/config"

export interface ResolvedGrant {
  readonly repository: RegistryRepository
  readonly profile: RepositoryProfileName
  readonly pushRefAllowlist: ReadonlyArray<string> | undefined
  readonly grantId: string
}

export type GrantProblem = "not-approved" | "profile-not-allowed" | "fingerprint-mismatch" | "profile-wider" | "duration"

export const grantProblemMessages: Readonly<Record<GrantProblem, string>> = {
  "not-approved": "the repository is not approved for the grant's Namespace",
  "profile-not-allowed": "the grant's profile is not allowed for this repository and Namespace",
  "fingerprint-mismatch": "the grant no longer matches the registry; deploy again",
  "profile-wider": "the requested profile is wider than the grant's profile",
  duration: "durationSeconds is longer than the registry's maximumDurationSeconds"
}

export const resolveGrant = (
  registry: RepositoryRegistry,
  request: OpenSessionRequest
): ResolvedGrant | GrantProblem => {
  const { grant } = request
  const approved = approvedRepository(registry, grant.namespaceId, grant.repositoryRef)
  if (approved === undefined) return "not-approved"
  if (!approved.policy.profiles.includes(grant.profile)) return "profile-not-allowed"
  const fingerprint = grantFingerprint({ registry, ...approved, profile: grant.profile })
  if (fingerprint !== grant.fingerprint) return "fingerprint-mismatch"
  const profile = request.profile ?? grant.profile
  if (!profileIncludes(grant.profile, profile)) return "profile-wider"
  if (request.durationSeconds > registry.maximumDurationSeconds) return "duration"
  return {
    repository: approved.repository,
    profile,
    pushRefAllowlist: approved.policy.pushRefAllowlist,
    grantId: fingerprint
  }
}
