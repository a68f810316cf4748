/**
 * `GET .../agents/repository-options` (SPEC 4.4, 2.14, 8; docs/decisions/repository-credentials.md):
 * the registry's repositories approved for the Namespace, to anyone who may create Agents
 * there, with the code host's descriptions of the references `descriptionRefs` names (cached
 * five minutes). Without a Repo Driver nothing is approved: `[]`. A closed Namespace (failed or
 * being deleted) cannot take new Agents: 409. The credential service unreachable while
 * descriptions are needed: 503 `REPOSITORY_OPTIONS_UNAVAILABLE`.
 */
import type { RepositoryOptions as OptionsPage, RepositoryOptionsQuery } from "@svc/core/api"
import { NamespacesRepo } from "@svc/core/db"
import { RepoDriver } from "@svc/core/drivers/repo"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { Limits, type NamespaceId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { namespaceRef } from "../iam/access.js"
import { makeDescriptionCache } from "./descriptionCache.js"
import { exportedFn } from "@svc/core/observability"

const NONE: OptionsPage = { options: [], descriptionsPending: false }

export class RepositoryOptions extends Effect.Service<RepositoryOptions>()("@svc/api/RepositoryOptions", {
  scoped: Effect.gen(function* () {
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespacesRepo
    const driver = yield* Effect.serviceOption(RepoDriver)
    const cache = Option.isSome(driver) ? Option.some(yield* makeDescriptionCache(driver.value.describe)) : Option.none()

    const list = exportedFn("RepositoryOptions.list")(function* (namespaceId: NamespaceId, query: RepositoryOptionsQuery) {
      yield* authorize("agent:create", namespaceRef(namespaceId))
      const namespace = yield* namespaces.findLive(namespaceId)
      if (Option.isNone(namespace)) return yield* new NotFound({ message: "The Namespace does not exist." })
      if (namespace.value.status === "deleting" || namespace.value.status === "failed") {
        return yield* new ResourceConflict({ message: "The Namespace is closed and cannot accept new Agents." })
      }
      if (Option.isNone(driver) || Option.isNone(cache)) return NONE
      const options = driver.value.listOptions(namespaceId).slice(0, Limits.repositoryOptionsItems)
      // Only references approved here are described: another Namespace's repositories stay unseen.
      const wanted = (query.descriptionRefs ?? []).filter((ref) => options.some((o) => o.repositoryRef === ref))
      if (wanted.length === 0) return { options, descriptionsPending: false }
      const { descriptions, pending } = yield* cache.value.lookup(wanted)
      return {
        options: options.map((option) => {
          const description = descriptions.get(option.repositoryRef)
          return description === undefined ? option : { ...option, description }
        }),
        descriptionsPending: pending
      }
    })

    return { list }
  }),
  dependencies: [Authorization.Default, NamespacesRepo.Default]
}) {}
