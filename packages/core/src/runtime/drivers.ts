import { Effect, Layer, Option } from "effect"
import { loadOrExit, type StartupConfig } from "../config/index.js"
import * as Compute from "../drivers/compute/index.js"
import { selectRepoDriver } from "../drivers/repo/codehost.js"
import { selectSecretDriver } from "../drivers/secret/index.js"

/**
 * The Installation-level Drivers a process runs with, selected from its configuration (DESIGN
 * §10), for each main.ts: the Secret Driver over `SVC_SECRET_KEY` (without it: exit 78 naming
 * the variable), the Compute Driver `drivers.compute` names, and the Repo Driver when `drivers.repo`
 * and a `code_host` Backend are configured (optional: its users ask with `Effect.serviceOption`).
 * Nothing below main.ts selects a Driver or falls back to one.
 */
export const selectDrivers = (config: StartupConfig) =>
  Effect.map(loadOrExit(selectSecretDriver(config)), (secret) =>
    Layer.mergeAll(secret, Compute.layerFromConfiguration, Option.getOrElse(selectRepoDriver(config), () => Layer.empty)))
