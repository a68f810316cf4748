import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { Namespaces } from "./service.js"

/** The Namespaces group: each handler calls the service, which authorizes the exact resource. */
export const NamespacesLive = HttpApiBuilder.group(SvcApi, "namespaces", (handlers) =>
  Effect.map(Namespaces, (namespaces) =>
    handlers
      .handle("create", ({ payload }) => namespaces.create(payload))
      .handle("list", ({ urlParams }) => namespaces.list(urlParams))
      .handle("get", ({ path }) => namespaces.get(path.namespaceId))
      .handle("delete", ({ path }) => namespaces.delete(path.namespaceId))
  )
)
