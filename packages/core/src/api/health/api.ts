import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { ErrorWire } from "../../errors/index.js"
import { Envelope } from "../../schema/index.js"
import { Schema } from "effect"

export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Health" })

export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  database: Schema.Literal("ok"),
  migrations: Schema.Literal("current")
}).annotations({ identifier: "Readiness" })

/** Liveness and readiness probes: unauthenticated, in the envelope (DESIGN §3). */
export const HealthApi = HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Envelope(Health, "HealthResponse"))
      .annotate(OpenApi.Summary, "The process is up")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Envelope(Readiness, "ReadinessResponse"))
      .addError(ErrorWire.DEPENDENCY_UNAVAILABLE)
      .annotate(OpenApi.Summary, "The database is reachable and its migrations are current")
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness and readiness probes for orchestrators and load balancers")
