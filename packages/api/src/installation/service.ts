/**
 * The Installation (SPEC 2.2): its id, the capabilities its Drivers give, and its Backend
 * inventory. Capabilities, Backends and host diagnostics (how gateways are confined) are
 * computed once, when the service is built.
 */
import { HttpServerResponse } from "@effect/platform"
import { Installation as InstallationBody, InstallationApi } from "@svc/core/api"
import { InstallationConfiguration } from "@svc/core/config"
import { detectConfinement } from "@svc/core/drivers/compute"
import { InstallationRepo } from "@svc/core/db"
import { exportedFn } from "@svc/core/observability"
import { type Caller, CurrentCaller, Installation } from "@svc/core/iam"
import { CurrentRequestId, InstallationId } from "@svc/core/schema"
import { SqlClient } from "@effect/sql"
import { InstallationExists, NotFound, Unauthenticated } from "@svc/core/errors"
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

/** `GET /backends` in one statement too: its decision rides in the credential lookup. */
export const backendsRead: Preauthorization = {
  endpoint: InstallationApi.endpoints.backends,
  permission: "installation:administer",
  resource: Installation
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

    // What GET /installation answers besides the id is fixed for the service's life: encoded with
    // the contract's schema once, here, instead of on every request (issue 11, CPU per request).
    const fixedBody = Schema.encodeSync(InstallationBody)({ capabilities, ...(diagnostics === undefined ? {} : { diagnostics }) })

    /** The Installation's id (undefined before bootstrap), with `installation:read` checked. */
    const currentId = (caller: Caller) => {
      const answer = preauthorized(caller, installationRead)
      // Allowed in the credential statement: its row is the read (NULL before bootstrap).
      if (answer?.allowed === true) {
        return answer.row === null ? Effect.succeed(undefined) : Effect.map(Effect.orDie(decodeRow(answer.row)), (row) => row.id)
      }
      // Otherwise the decision and the row in one statement, with the exact denial of `authorize`.
      return Effect.map(
        reads.page({ gates: [{ permission: "installation:read", resource: Installation }], parentLive: TRUE, missing: never, page: repo.currentQuery }),
        (rows) => rows[0]?.id
      )
    }

    /** The envelope of the contract's `InstallationResponse`, from the id and the encoded fixed part. */
    const get = exportedFn("Installation.get")(function* () {
      const id = yield* currentId(yield* CurrentCaller)
      const data = id === undefined ? fixedBody : { id, ...fixedBody }
      return HttpServerResponse.unsafeJson({ data, meta: { requestId: yield* CurrentRequestId } })
    })

    const listBackends = exportedFn("Installation.backends")(function* () {
      // Not allowed in the credential statement (or not asked there): the unfolded check.
      if (preauthorized(yield* CurrentCaller, backendsRead)?.allowed !== true) yield* authorize("installation:administer", Installation)
      return backends
    })

    /**
     * `POST /installation/bootstrap` (SPEC 4.2, development servers only: `DevelopmentOnly`).
     * Bootstrap needs a human session (SPEC 5.5.4: 401 for a key) of an Installation
     * administrator. The initializer made the Installation before this server started (SPEC
     * 5.6.1), so there is never one left to create here.
     */
    const bootstrap = exportedFn("Installation.bootstrap")(function* () {
      const caller = yield* CurrentCaller
      if (caller.credential._tag !== "Session") {
        return yield* new Unauthenticated({ message: "Bootstrap needs a human administrator's session, not a service key." })
      }
      yield* authorize("installation:administer", Installation)
      return yield* new InstallationExists({ message: "The Installation already exists; it is bootstrapped once, before the service starts." })
    })

    return { get, backends: listBackends, bootstrap }
  }),
  dependencies: [InstallationRepo.Default, Authorization.Default, GatedPages.Default]
}) {}
