/**
 * The Installation (SPEC 2.2): its id, the capabilities its Drivers give, and its Backend
 * inventory. Capabilities, Backends and host diagnostics (how gateways are confined) are
 * computed once, when the service is built.
 */
import { InstallationConfiguration } from "@svc/core/config"
import { detectConfinement } from "@svc/core/drivers/compute"
import { InstallationRepo } from "@svc/core/db"
import { Installation } from "@svc/core/iam"
import { SqlClient } from "@effect/sql"
import { NotFound } from "@svc/core/errors"
import { Effect } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages } from "../auth/gatedPage.js"
import { backendsOf, capabilitiesOf, diagnosticsOf } from "./capabilities.js"

/** The Installation row is never "missing": a read before bootstrap answers without an id. */
const never = () => new NotFound({ message: "The Installation does not exist." })

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

    const get = Effect.fn("Installation.get")(function* () {
      // The decision and the row in one statement (issue 11): the same checks, one round trip.
      const rows = yield* reads.page({ gates: [{ permission: "installation:read", resource: Installation }], parentLive: TRUE, missing: never, page: repo.currentQuery })
      return {
        ...(rows[0] === undefined ? {} : { id: rows[0].id }),
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
