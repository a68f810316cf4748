import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { Permissions } from "./service.js"

/** The permission probes: each handler calls the service, which checks read first. */
export const PermissionsLive = HttpApiBuilder.group(SvcApi, "permissions", (handlers) =>
  Effect.map(Permissions, (permissions) =>
    handlers
      .handle("installation", () => permissions.onInstallation())
      .handle("namespace", ({ path }) => permissions.onNamespace(path.namespaceId))
      .handle("agent", ({ path }) => permissions.onAgent(path.namespaceId, path.agentId))
  )
)
