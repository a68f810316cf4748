/**
 * The Installation (SPEC 2.2): its id, the capabilities its Drivers give, and its Backend
 * inventory. Capabilities and Backends come from the configuration, computed once.
 */
import { InstallationConfiguration } from "@svc/core/config"
import { InstallationRepo } from "@svc/core/db"
import { Installation } from "@svc/core/iam"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { backendsOf, capabilitiesOf } from "./capabilities.js"

/** Needs the InstallationConfiguration (each main.ts provides it). */
export class InstallationService extends Effect.Service<InstallationService>()("@svc/api/Installation", {
  effect: Effect.gen(function* () {
    const repo = yield* InstallationRepo
    const { authorize } = yield* Authorization
    const config = yield* InstallationConfiguration
    const capabilities = capabilitiesOf(config)
    const backends = backendsOf(config)

    const get = Effect.fn("Installation.get")(function* () {
      yield* authorize("installation:read", Installation)
      const id = yield* repo.current.pipe(Effect.orDie)
      return { ...Option.match(id, { onNone: () => ({}), onSome: (value) => ({ id: value }) }), capabilities }
    })

    const listBackends = Effect.fn("Installation.backends")(function* () {
      yield* authorize("installation:administer", Installation)
      return backends
    })

    return { get, backends: listBackends }
  }),
  dependencies: [InstallationRepo.Default, Authorization.Default]
}) {}
