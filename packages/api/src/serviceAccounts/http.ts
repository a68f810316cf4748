import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { ServiceAccountLifecycle } from "./lifecycle.js"
import { ServiceAccounts } from "./service.js"

/** The service-account group: each handler calls a service, which authorizes the exact resource. */
export const ServiceAccountsLive = HttpApiBuilder.group(SvcApi, "serviceAccounts", (handlers) =>
  Effect.map(Effect.all([ServiceAccounts, ServiceAccountLifecycle]), ([accounts, lifecycle]) =>
    handlers
      .handle("create", ({ path, payload }) => accounts.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => accounts.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => accounts.get(path.namespaceId, path.serviceAccountId))
      .handle("issueCredential", ({ path }) => lifecycle.issueCredential(path.namespaceId, path.serviceAccountId))
      .handle("setCredential", ({ path, payload }) => accounts.setCredential(path.namespaceId, path.serviceAccountId, payload))
      .handle("delete", ({ path }) => lifecycle.delete(path.namespaceId, path.serviceAccountId))
  )
)
