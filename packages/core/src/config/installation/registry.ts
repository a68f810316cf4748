/**
 * The repository registry (SPEC 2.14): the nonsecret JSON document at the `code_host` Backend's
 * `registryPath`, shared by the API, the worker and the credential service. It says which
 * repositories the code-host App may hand out, to which Namespaces, with which profiles.
 * Pure Schema, importable without Node.
 */
import { Schema } from "effect"
import { UUID_V4 } from "../../schema/ids.js"
import { Limits } from "../../schema/limits.js"
import { boundedInt, Identifier } from "./fields.js"

/** SPEC 2.14: the three profiles; each adds to the one before. */
export const repositoryProfiles = ["git-read", "git-write", "git-full"] as const
export type RepositoryProfileName = typeof repositoryProfiles[number]
export const RepositoryProfileName = Schema.String.pipe(
  Schema.filter((s): s is RepositoryProfileName => (repositoryProfiles as ReadonlyArray<string>).includes(s), {
    message: () => "must be git-read, git-write or git-full"
  })
)

/** App, installation and repository ids: positive decimal safe integers, as strings. */
export const DecimalId = Schema.String.pipe(
  Schema.filter((s) => /^[1-9][0-9]*$/.test(s) && Number.isSafeInteger(Number(s)), {
    message: () => "must be a positive decimal safe integer as a string"
  })
)

/** The same pattern as an Agent's `repositoryRef` (SPEC 2.4). */
export const RegistryRepositoryRef = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, {
    message: () => "must be 1-128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit"
  })
)

const OWNER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/

/** `owner/name`, canonicalized to lowercase on decode. */
export const CanonicalRepository = Schema.transform(
  Schema.String.pipe(
    Schema.filter((s) => OWNER_NAME.test(s) && !/\/\.\.?$/.test(s) && !s.endsWith(".git"), {
      message: () => "must be owner/name (owner 1-39 of A-Z a-z 0-9 -, name 1-100 of A-Z a-z 0-9 . _ -, no .git)"
    })
  ),
  Schema.String,
  { strict: true, decode: (s) => s.toLowerCase(), encode: (s) => s }
)

/**
 * A ref a push may update: a full ref name, or a prefix ending in `/*` (`refs/heads/agent/*`).
 * Checked on the refs a native push names; it is not server-side branch protection.
 */
export const PushRefPattern = Schema.String.pipe(
  Schema.filter((s) => /^refs\/[A-Za-z0-9._\/-]{1,250}(\/\*)?$/.test(s) && !s.includes("..") && !s.includes("//"), {
    message: () => "must be a full ref name such as refs/heads/main, optionally ending in /*"
  })
)

const uniqueValues = <A>(items: ReadonlyArray<A>): boolean => new Set(items).size === items.length

export const NamespacePolicy = Schema.Struct({
  namespaceId: Schema.String.pipe(
    Schema.pattern(new RegExp(`^ns_${UUID_V4}$`), { message: () => "must be a Namespace id (ns_ and a lowercase UUIDv4)" })
  ),
  profiles: Schema.Array(RepositoryProfileName).pipe(
    Schema.minItems(1, { message: () => "must name at least one profile" }),
    Schema.filter(uniqueValues, { message: () => "must not repeat a profile" })
  ),
  pushRefAllowlist: Schema.optionalWith(
    Schema.Array(PushRefPattern).pipe(
      Schema.minItems(1, { message: () => "must not be empty (omit it to allow every ref)" }),
      Schema.maxItems(64, { message: () => "must have at most 64 entries" }),
      Schema.filter(uniqueValues, { message: () => "must not repeat an entry" })
    ),
    { exact: true }
  )
})
export type NamespacePolicy = typeof NamespacePolicy.Type

export const RegistryRepository = Schema.Struct({
  repositoryRef: RegistryRepositoryRef,
  repositoryId: DecimalId,
  repository: CanonicalRepository,
  namespaces: Schema.Array(NamespacePolicy).pipe(
    Schema.maxItems(Limits.registryNamespacePoliciesPerRepository, {
      message: () => `must have at most ${Limits.registryNamespacePoliciesPerRepository} Namespace policies`
    }),
    Schema.filter((policies) => {
      const issues: Array<Schema.FilterIssue> = []
      policies.forEach((policy, index) => {
        if (policies.findIndex((other) => other.namespaceId === policy.namespaceId) < index) {
          issues.push({ path: [index, "namespaceId"], message: "repeats an earlier Namespace" })
        }
      })
      return issues
    })
  )
})
export type RegistryRepository = typeof RegistryRepository.Type

const duplicates = (
  repositories: ReadonlyArray<RegistryRepository>,
  key: "repositoryRef" | "repositoryId" | "repository"
): Array<Schema.FilterIssue> => {
  const seen = new Map<string, number>()
  const issues: Array<Schema.FilterIssue> = []
  repositories.forEach((repository, index) => {
    const earlier = seen.get(repository[key])
    if (earlier !== undefined) {
      issues.push({ path: ["repositories", index, key], message: `duplicates repositories[${earlier}].${key}` })
    } else seen.set(repository[key], index)
  })
  return issues
}

export const RepositoryRegistry = Schema.Struct({
  version: Schema.Literal(1),
  /** The `code_host` Backend this registry belongs to. */
  backendId: Identifier,
  /** Names this code-host App installation inside the grant fingerprint and session bindings. */
  providerInstanceId: Identifier,
  appId: DecimalId,
  installationId: DecimalId,
  /** The longest session the credential service admits for these repositories. */
  maximumDurationSeconds: boundedInt(60, 86400),
  repositories: Schema.Array(RegistryRepository).pipe(
    Schema.maxItems(Limits.registryRepositories, {
      message: () => `must have at most ${Limits.registryRepositories} repositories`
    })
  )
}).pipe(
  Schema.filter((registry) => {
    const issues = [
      ...duplicates(registry.repositories, "repositoryRef"),
      ...duplicates(registry.repositories, "repositoryId"),
      ...duplicates(registry.repositories, "repository")
    ]
    const policies = registry.repositories.reduce((total, repository) => total + repository.namespaces.length, 0)
    if (policies > Limits.registryPoliciesOverall) {
      issues.push({
        path: ["repositories"],
        message: `must have at most ${Limits.registryPoliciesOverall} Namespace policies overall (has ${policies})`
      })
    }
    return issues
  }),
  Schema.annotations({ identifier: "RepositoryRegistry", parseOptions: { onExcessProperty: "error", errors: "all" } })
)
export type RepositoryRegistry = typeof RepositoryRegistry.Type
export type RepositoryRegistryEncoded = typeof RepositoryRegistry.Encoded

/** The policy a registry gives `namespaceId` for `repositoryRef`, if any. */
export const approvedRepository = (
  registry: RepositoryRegistry,
  namespaceId: string,
  repositoryRef: string
): { readonly repository: RegistryRepository; readonly policy: NamespacePolicy } | undefined => {
  const repository = registry.repositories.find((r) => r.repositoryRef === repositoryRef)
  const policy = repository?.namespaces.find((p) => p.namespaceId === namespaceId)
  return repository === undefined || policy === undefined ? undefined : { repository, policy }
}
