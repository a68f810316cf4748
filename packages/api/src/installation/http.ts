import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { InstallationService } from "./service.js"

/** The Installation group: each handler calls the service, which authorizes the Installation. */
export const InstallationLive = HttpApiBuilder.group(SvcApi, "installation", (handlers) =>
  Effect.map(InstallationService, (installation) =>
    handlers
      .handle("get", () => installation.get())
      .handle("backends", () => installation.backends())
      .handle("bootstrap", () => installation.bootstrap())
  )
)
