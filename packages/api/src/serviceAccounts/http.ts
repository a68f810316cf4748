import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { ServiceAccountId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import { ServiceAccountLifecycle } from "./lifecycle.js"
import { ServiceAccounts } from "./service.js"

/** SPEC 4's `{serviceAccountId}` is any `sa_<id>`; only ours (`sa_<uuidv4>`) can name an account. */
const isOurs = Schema.is(ServiceAccountId)

/** The service-account group: each handler calls a service, which authorizes the exact resource. */
export const ServiceAccountsLive = HttpApiBuilder.group(SvcApi, "serviceAccounts", (handlers) =>
  Effect.map(Effect.all([ServiceAccounts, ServiceAccountLifecycle]), ([accounts, lifecycle]) =>
    handlers
      .handle("create", ({ path, payload }) => accounts.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => accounts.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) =>
        isOurs(path.serviceAccountId) ? accounts.get(path.namespaceId, path.serviceAccountId) : accounts.unknown(path.namespaceId, path.serviceAccountId, "read"))
      .handle("issueCredential", ({ path }) =>
        isOurs(path.serviceAccountId)
          ? lifecycle.issueCredential(path.namespaceId, path.serviceAccountId)
          : accounts.unknown(path.namespaceId, path.serviceAccountId, "update"))
      .handle("setCredential", ({ path, payload }) =>
        isOurs(path.serviceAccountId)
          ? accounts.setCredential(path.namespaceId, path.serviceAccountId, payload)
          : accounts.unknown(path.namespaceId, path.serviceAccountId, "update"))
      .handle("delete", ({ path }) =>
        isOurs(path.serviceAccountId) ? lifecycle.delete(path.namespaceId, path.serviceAccountId) : accounts.unknown(path.namespaceId, path.serviceAccountId, "delete"))
  )
)
