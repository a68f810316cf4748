import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { Secrets } from "./service.js"

/** The Secrets group: each handler calls the service, which authorizes the exact resource. */
export const SecretsLive = HttpApiBuilder.group(SvcApi, "secrets", (handlers) =>
  Effect.map(Secrets, (secrets) =>
    handlers
      .handle("create", ({ path, payload }) => secrets.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => secrets.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => secrets.get(path.namespaceId, path.secretId))
      .handle("update", ({ path, payload }) => secrets.update(path.namespaceId, path.secretId, payload))
      .handle("delete", ({ path }) => secrets.delete(path.namespaceId, path.secretId))
  )
)
