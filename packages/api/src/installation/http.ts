import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { InstallationConfiguration } from "@svc/core/config"
import { detectConfinement } from "@svc/core/drivers/compute"
import { Installation as InstallationResource } from "@svc/core/iam"
import type { InstallationId } from "@svc/core/schema"
import { Effect } from "effect"
import { SvcApi } from "../api.js"
import { authorize } from "../auth/authorize.js"
import { backendsOf, capabilitiesOf, diagnosticsOf } from "./capabilities.js"

/** Needs an SqlClient and the InstallationConfiguration (each main.ts provides it). */
export const InstallationLive = HttpApiBuilder.group(SvcApi, "installation", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* InstallationConfiguration
    const capabilities = capabilitiesOf(config)
    const backends = backendsOf(config)
    // The API runs on the gateways' host with `local`: what this host offers is what they get.
    const diagnostics = diagnosticsOf(
      config,
      config.drivers.compute.id === "local" ? yield* Effect.promise(() => detectConfinement()) : undefined
    )
    return handlers
      .handle("get", () =>
        Effect.gen(function* () {
          yield* authorize("installation:read", InstallationResource)
          const rows = yield* sql<{ id: string }>`SELECT id FROM installation`.pipe(Effect.orDie)
          const id = rows[0]?.id as InstallationId | undefined
          return { ...(id === undefined ? {} : { id }), capabilities, ...(diagnostics === undefined ? {} : { diagnostics }) }
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.withSpan("Installation.get")))
      .handle("backends", () =>
        authorize("installation:administer", InstallationResource).pipe(
          Effect.as(backends),
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.withSpan("Installation.backends")
        ))
  })
)
