import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { CredentialSources } from "./service.js"

/** The credential-sources group: each handler calls the service, which authorizes the exact resource. */
export const CredentialSourcesLive = HttpApiBuilder.group(SvcApi, "credentialSources", (handlers) =>
  Effect.map(CredentialSources, (sources) =>
    handlers
      .handle("create", ({ path, payload }) => sources.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => sources.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => sources.get(path.namespaceId, path.credentialSourceId))
      .handle("delete", ({ path }) => sources.delete(path.namespaceId, path.credentialSourceId))
  )
)
