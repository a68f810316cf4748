import { BootstrapConfig, loadOrExit, type StartupConfig } from "@svc/core/config"
import { Effect } from "effect"
import type { BootstrapInput } from "./initializer.js"

/**
 * What the initializer needs from the configuration: the output paths and the administrator's
 * email (required in production, development defaults under the data dir), or exit 78 naming
 * the variables.
 */
export const bootstrapInput = (config: StartupConfig): Effect.Effect<BootstrapInput> =>
  Effect.map(loadOrExit(BootstrapConfig), (settings) => ({
    ...settings,
    env: config.process.env,
    devAdminPassword: config.process.secrets.devAdminPassword
  }))
