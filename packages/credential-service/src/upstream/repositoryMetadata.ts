/**
 * Repository descriptions for the API's repository options (SPEC 4.4; DESIGN §12): one
 * installation token with `metadata: read` for the requested registry repositories, one
 * `GET /repos/{owner}/{repo}` each (four at a time), then the token is revoked. A repository whose
 * returned id differs from the registry's `repositoryId` gets no description (a renamed or
 * replaced repository must not lend its text to the approved one).
 */
import type { RepositoryRegistry } from "@svc/core/config"
import { optionDescription, type RepositoryDescriptions } from "@svc/core/drivers/repo"
import { Context, Effect } from "effect"
import type { CodeHostClient, UpstreamError } from "./codeHost.js"

export interface RepositoryMetadataShape {
  readonly describe: (repositoryRefs: ReadonlyArray<string>) => Effect.Effect<RepositoryDescriptions, UpstreamError>
}

export class RepositoryMetadata extends Context.Tag("@svc/credential-service/RepositoryMetadata")<
  RepositoryMetadata,
  RepositoryMetadataShape
>() {}

const METADATA_ONLY = { metadata: "read" } as const

export const makeRepositoryMetadata = (registry: RepositoryRegistry, client: CodeHostClient): RepositoryMetadataShape => ({
  describe: (repositoryRefs) =>
    Effect.gen(function* () {
      const known = repositoryRefs.flatMap((ref) => {
        const repository = registry.repositories.find((r) => r.repositoryRef === ref)
        return repository === undefined ? [] : [repository]
      })
      const descriptions = new Map<string, string | null>()
      if (known.length > 0) {
        const minted = yield* client.mintFor(known.map((r) => r.repositoryId), METADATA_ONLY)
        yield* Effect.forEach(known, (repository) =>
          client.readRepository(minted.token, repository.repository).pipe(
            Effect.tap((read) =>
              Effect.sync(() => {
                const matches = read !== undefined && String(read.id) === repository.repositoryId
                descriptions.set(repository.repositoryRef, matches ? optionDescription(read.description) : null)
              })
            )
          ), { concurrency: 4, discard: true }).pipe(
          // Revocation failures are not the caller's problem: the token lives an hour at most.
          Effect.ensuring(Effect.ignore(client.revoke(minted.token)))
        )
      }
      return {
        repositories: repositoryRefs.map((repositoryRef) => ({ repositoryRef, description: descriptions.get(repositoryRef) ?? null }))
      }
    })
})
