/**
 * The Installation (SPEC 2.2): its id, the capabilities its Drivers give, and its Backend
 * inventory. Capabilities, Backends and host diagnostics (how gateways are confined) are
 * computed once, when the service is built.
 */
import { InstallationConfiguration } from "@svc/core/config"
import { detectConfinement } from "@svc/core/drivers/compute"
import { InstallationRepo } from "@svc/core/db"
import { Installation } from "@svc/core/iam"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { backendsOf, capabilitiesOf, diagnosticsOf } from "./capabilities.js"

/** Needs the InstallationConfiguration (each main.ts provides it). */
export class InstallationService extends Effect.Service<InstallationService>()("@svc/api/Installation", {
  effect: Effect.gen(function* () {
    const repo = yield* InstallationRepo
    const { authorize } = yield* Authorization
    const config = yield* InstallationConfiguration
    const capabilities = capabilitiesOf(config)
    const backends = backendsOf(config)
    // The API runs on the gateways' host with `local`: what this host offers is what they get.
    const diagnostics = diagnosticsOf(
      config,
      config.drivers.compute.id === "local" ? yield* Effect.promise(() => detectConfinement()) : undefined
    )

    const get = Effect.fn("Installation.get")(function* () {
      yield* authorize("installation:read", Installation)
      const id = yield* repo.current.pipe(Effect.orDie)
      return {
        ...Option.match(id, { onNone: () => ({}), onSome: (value) => ({ id: value }) }),
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
  dependencies: [InstallationRepo.Default, Authorization.Default]
}) {}
