import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { documented, withApiErrors } from "@svc/core/http"
import { Envelope } from "@svc/core/schema"
import { Effect, Schema } from "effect"

export const Capabilities = Schema.Struct({
  durableAdmissionVersion: Schema.Literal(1)
}).annotations({ identifier: "Capabilities" })

/** The private control interface (SPEC 4.8), served over a mode-0600 Unix socket. */
export const ControlApi = documented(
  withApiErrors(HttpApi.make("credential-service")).add(
    HttpApiGroup.make("control")
      .add(
        HttpApiEndpoint.get("capabilities", "/v1/capabilities")
          .addSuccess(Envelope(Capabilities, "CapabilitiesResponse"))
          .annotate(OpenApi.Summary, "What this credential service supports")
      )
      .annotate(OpenApi.Description, "Private control interface of the credential service")
  )
)

export const ControlLive = HttpApiBuilder.group(ControlApi, "control", (handlers) =>
  handlers.handle("capabilities", () => Effect.succeed({ durableAdmissionVersion: 1 } as const))
)
