/**
 * SPEC 2.14: the profiles' permission contract (code-host API access in every profile; `git-full`
 * adds issue management over `git-write`; administration, workflow editing, Actions control and
 * secrets never requested) and what the grant fingerprint covers.
 */
import { describe, expect, it } from "@effect/vitest"
import type { RepositoryRegistry } from "@svc/core/config"
import { grantFingerprint, profilePermissions } from "@svc/core/drivers/repo"
import { sampleRegistry } from "../../../testing/credentialService.js"

const NS = "ns_0b6f4e52-7c4f-4d1e-9a59-2d3f3c1b2a10"

const fingerprint = (registry: RepositoryRegistry, profile: "git-read" | "git-write" = "git-write") => {
  const repository = registry.repositories[0]!
  const policy = repository.namespaces.find((p) => p.namespaceId === NS)!
  return grantFingerprint({ registry, repository, policy, profile })
}

const withPolicy = (policy: Partial<RepositoryRegistry["repositories"][number]["namespaces"][number]>) => {
  const base = sampleRegistry()
  const repository = base.repositories[0]!
  return sampleRegistry({
    repositories: [{ ...repository, namespaces: repository.namespaces.map((p) => (p.namespaceId === NS ? { ...p, ...policy } : p)) }]
  })
}

describe("repository grants (SPEC 2.14)", () => {
  it("every profile has code-host API access and none asks for administration, workflows, Actions or secrets", () => {
    const forbidden = ["administration", "workflows", "actions", "secrets", "organization_secrets", "environments"]
    for (const [profile, permissions] of Object.entries(profilePermissions)) {
      expect([profile, permissions.metadata]).toEqual([profile, "read"])
      expect([profile, Object.keys(permissions).filter((name) => forbidden.includes(name))]).toEqual([profile, []])
    }
    expect(profilePermissions["git-read"]).toMatchObject({ contents: "read", pull_requests: "read", issues: "read" })
    expect(profilePermissions["git-full"]).toEqual({ ...profilePermissions["git-write"], issues: "write" })
  })

  it("the fingerprint changes with each covered input and not with the order of allowed profiles", () => {
    const base = sampleRegistry()
    const original = fingerprint(base)
    expect(original).toMatch(/^sha256:[0-9a-f]{64}$/)
    const repository = base.repositories[0]!
    const changed = [
      fingerprint(sampleRegistry({ providerInstanceId: "github-other" })),
      fingerprint(sampleRegistry({ appId: "4243" })),
      fingerprint(sampleRegistry({ installationId: "778" })),
      fingerprint(sampleRegistry({ repositories: [{ ...repository, repositoryId: "1002" }] })),
      fingerprint(sampleRegistry({ maximumDurationSeconds: 1800 })),
      fingerprint(withPolicy({ profiles: ["git-read", "git-write", "git-full"] })),
      fingerprint(withPolicy({ pushRefAllowlist: ["refs/heads/main"] })),
      fingerprint(withPolicy({ pushRefAllowlist: undefined })),
      fingerprint(base, "git-read")
    ]
    expect(new Set([original, ...changed]).size).toBe(changed.length + 1)
    // The Namespace: the same policy under another Namespace id.
    const other = sampleRegistry({ repositories: [{ ...repository, namespaces: [{ ...repository.namespaces[0]!, namespaceId: "ns_1c7f5e63-8d5f-4e2f-8b6a-3e4f4d2c3b22" }] }] })
    const otherRepository = other.repositories[0]!
    expect(grantFingerprint({ registry: other, repository: otherRepository, policy: otherRepository.namespaces[0]!, profile: "git-write" })).not.toBe(original)
    expect(fingerprint(withPolicy({ profiles: ["git-write", "git-read"] }))).toBe(original)
  })
})
