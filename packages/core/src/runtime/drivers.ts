import { Effect, Layer, Option } from "effect"
import { DevUpstreamsConfig, loadOrExit, type StartupConfig } from "../config/index.js"
import * as Compute from "../drivers/compute/index.js"
import { selectRepoDriver } from "../drivers/repo/codehost.js"
import { selectSecretDriver } from "../drivers/secret/index.js"
import { selectServiceAccountDriver } from "../drivers/serviceAccount/index.js"

/**
 * The Installation-level Drivers a process runs with, selected from its configuration (DESIGN
 * §10), for each main.ts: the Secret Driver over `SVC_SECRET_KEY` (without it: exit 78 naming
 * the variable), the Compute Driver `drivers.compute` names, the ServiceAccount Driver of the
 * `model_accounts` Backend if selected (`SVC_DEV_UPSTREAMS` in production: exit 78), and the Repo
 * Driver when `drivers.repo` and a `code_host` Backend are configured (optional: its users ask
 * with `Effect.serviceOption`). Nothing below main.ts selects a Driver or falls back to one.
 */
export const selectDrivers = (config: StartupConfig) =>
  Effect.gen(function* () {
    const secret = yield* loadOrExit(selectSecretDriver(config))
    const upstreams = yield* loadOrExit(DevUpstreamsConfig)
    return Layer.mergeAll(
      secret,
      Compute.layerFromConfiguration,
      selectServiceAccountDriver(config.installation, upstreams),
      Option.getOrElse(selectRepoDriver(config), () => Layer.empty)
    )
  })
