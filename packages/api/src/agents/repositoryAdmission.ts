/**
 * Admission of an Agent's repository settings (SPEC 2.4, 2.14; docs/decisions/repository-credentials.md):
 * `repositoryBindings` or `repositoryAccess` name registry references, each with a profile the
 * registry allows for the Namespace. Deploy freezes the admitted grants, with their fingerprint,
 * into the revision's `repositoryCredentials`. Codes: no Repo Driver selected 409
 * RESOURCE_CONFLICT; a reference not approved for the Namespace 404 NOT_FOUND (whether another
 * Namespace has it is not disclosed); a profile the registry does not allow there 409
 * RESOURCE_CONFLICT.
 */
import { RepoDriver, type FrozenGrant } from "@svc/core/drivers/repo"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { Effect, Option } from "effect"
import { DIRECT_BINDING_PROFILE } from "./views.js"

export interface RepositoryRequest {
  readonly repositoryRef: string
  readonly profile: string
}

interface RepositorySettings {
  readonly repositoryBindings?: ReadonlyArray<{ readonly repositoryRef: string; readonly profile?: string | undefined }> | undefined
  readonly repositoryAccess?: {
    readonly defaultProfile: string
    readonly repositories: ReadonlyArray<{ readonly repositoryRef: string; readonly profile?: string | undefined }>
  } | undefined
}

/** The repositories settings ask for, each with its effective profile; undefined when they name none. */
export const requestedRepositories = (settings: RepositorySettings): ReadonlyArray<RepositoryRequest> | undefined => {
  if (settings.repositoryBindings !== undefined) {
    return settings.repositoryBindings.map((b) => ({ repositoryRef: b.repositoryRef, profile: b.profile ?? DIRECT_BINDING_PROFILE }))
  }
  const access = settings.repositoryAccess
  if (access !== undefined) {
    return access.repositories.map((r) => ({ repositoryRef: r.repositoryRef, profile: r.profile ?? access.defaultProfile }))
  }
  return undefined
}

export class RepositoryAdmission extends Effect.Service<RepositoryAdmission>()("@svc/api/RepositoryAdmission", {
  effect: Effect.gen(function* () {
    const driver = yield* Effect.serviceOption(RepoDriver)

    /** Every requested repository as a frozen grant, or the first refusal. */
    const grants = (
      namespaceId: string,
      requests: ReadonlyArray<RepositoryRequest> | undefined
    ): Effect.Effect<ReadonlyArray<FrozenGrant>, NotFound | ResourceConflict> =>
      Effect.gen(function* () {
        if (requests === undefined || requests.length === 0) return [] as ReadonlyArray<FrozenGrant>
        if (Option.isNone(driver)) {
          return yield* new ResourceConflict({ message: "Repository bindings need a Repo Driver, and none is selected." })
        }
        return yield* Effect.forEach(requests, (request) =>
          driver.value.resolve(namespaceId, request).pipe(
            Effect.mapError((refusal): NotFound | ResourceConflict =>
              refusal.reason === "not-approved"
                ? new NotFound({ message: `The repository ${refusal.repositoryRef} is not approved for this Namespace.` })
                : new ResourceConflict({
                  message: `The profile ${request.profile} is not allowed for the repository ${refusal.repositoryRef} in this Namespace.`
                })
            )
          ))
      })

    /** Admission on create, update and provision: the grants must be resolvable now. */
    const admit = (namespaceId: string, requests: ReadonlyArray<RepositoryRequest> | undefined) =>
      Effect.asVoid(grants(namespaceId, requests))

    return { admit, grants }
  })
}) {}
