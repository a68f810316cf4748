import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { Health } from "./service.js"

export const HealthLive = HttpApiBuilder.group(SvcApi, "health", (handlers) =>
  Effect.map(Health, (health) =>
    handlers
      .handle("healthz", () => health.live())
      .handle("readyz", () => health.ready())
  )
)
