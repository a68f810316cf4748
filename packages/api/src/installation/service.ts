/**
 * The Installation (SPEC 2.2): its id, the capabilities its Drivers give, and its Backend
 * inventory. Capabilities, Backends and host diagnostics (how gateways are confined) are
 * computed once, when the service is built.
 */
import { InstallationApi } from "@svc/core/api"
import { InstallationConfiguration } from "@svc/core/config"
import { detectConfinement } from "@svc/core/drivers/compute"
import { InstallationRepo } from "@svc/core/db"
import { CurrentCaller, Installation } from "@svc/core/iam"
import { InstallationId } from "@svc/core/schema"
import { SqlClient } from "@effect/sql"
import { NotFound } from "@svc/core/errors"
import { Effect, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages } from "../auth/gatedPage.js"
import { type Preauthorization, preauthorized } from "../auth/preauthorization.js"
import { backendsOf, capabilitiesOf, diagnosticsOf } from "./capabilities.js"

/** The Installation row is never "missing": a read before bootstrap answers without an id. */
const never = () => new NotFound({ message: "The Installation does not exist." })

/**
 * `GET /installation` in one statement: the credential lookup decides `installation:read` and
 * reads the Installation row (issue 11, item 1). Given to the Authentication middleware.
 */
export const installationRead: Preauthorization = {
  endpoint: InstallationApi.endpoints.get,
  permission: "installation:read",
  resource: Installation,
  read: (sql) => sql`SELECT id FROM installation`
}

const decodeRow = Schema.decodeUnknown(Schema.Struct({ id: InstallationId }))

/** Needs the InstallationConfiguration (each main.ts provides it). */
export class InstallationService extends Effect.Service<InstallationService>()("@svc/api/Installation", {
  effect: Effect.gen(function* () {
    const repo = yield* InstallationRepo
    const { authorize } = yield* Authorization
    const reads = yield* GatedPages
    const TRUE = (yield* SqlClient.SqlClient)`TRUE`
    const config = yield* InstallationConfiguration
    const capabilities = capabilitiesOf(config)
    const backends = backendsOf(config)
    // The API runs on the gateways' host with `local`: what this host offers is what they get.
    const diagnostics = diagnosticsOf(
      config,
      config.drivers.compute.id === "local" ? yield* Effect.promise(() => detectConfinement()) : undefined
    )

    /** The Installation's id (undefined before bootstrap), with `installation:read` checked. */
    const currentId = Effect.gen(function* () {
      const answer = preauthorized(yield* CurrentCaller, installationRead)
      // Allowed in the credential statement: its row is the read (NULL before bootstrap).
      if (answer?.allowed === true) return answer.row === null ? undefined : (yield* decodeRow(answer.row).pipe(Effect.orDie)).id
      // Otherwise the decision and the row in one statement, with the exact denial of `authorize`.
      const rows = yield* reads.page({ gates: [{ permission: "installation:read", resource: Installation }], parentLive: TRUE, missing: never, page: repo.currentQuery })
      return rows[0]?.id
    })

    const get = Effect.fn("Installation.get")(function* () {
      const id = yield* currentId
      return {
        ...(id === undefined ? {} : { id }),
        capabilities,
        ...(diagnostics === undefined ? {} : { diagnostics })
      }
    })

    const listBackends = Effect.fn("Installation.backends")(function* () {
      yield* authorize("installation:administer", Installation)
      return backends
    })

    return { get, backends: listBackends }
  }),
  dependencies: [InstallationRepo.Default, Authorization.Default, GatedPages.Default]
}) {}
