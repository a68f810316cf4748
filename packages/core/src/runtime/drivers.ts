import { Effect, Layer } from "effect"
import { loadOrExit, type StartupConfig } from "../config/index.js"
import * as Compute from "../drivers/compute/index.js"
import { selectSecretDriver } from "../drivers/secret/index.js"

/**
 * The Installation-level Drivers a process runs with, selected from its configuration (DESIGN
 * §10), for each main.ts: the Secret Driver over `SVC_SECRET_KEY` (without it: exit 78 naming
 * the variable) and the Compute Driver `drivers.compute` names. Nothing below main.ts selects a
 * Driver or falls back to one.
 */
export const selectDrivers = (config: StartupConfig) =>
  Effect.map(loadOrExit(selectSecretDriver(config)), (secret) => Layer.merge(secret, Compute.layerFromConfiguration))
