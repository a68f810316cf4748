import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { AuditQueries } from "./service.js"

/** The audit group (an extension of SPEC 0.1.0): each handler calls the service. */
export const AuditApiLive = HttpApiBuilder.group(SvcApi, "audit", (handlers) =>
  Effect.map(AuditQueries, (audit) =>
    handlers
      .handle("list", ({ urlParams }) => audit.list(urlParams))
      .handle("listNamespace", ({ path, urlParams }) => audit.listNamespace(path.namespaceId, urlParams))
  )
)
