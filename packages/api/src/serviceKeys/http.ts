import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { ServiceKeys } from "./service.js"

export const ServiceKeysLive = HttpApiBuilder.group(SvcApi, "serviceKeys", (handlers) =>
  Effect.map(ServiceKeys, (keys) =>
    handlers
      .handle("issue", ({ payload }) => keys.issue(payload))
      .handle("revoke", ({ path }) => keys.revoke(path.keyId))
  )
)
