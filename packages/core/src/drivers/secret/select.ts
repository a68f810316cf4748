import { ConfigError, Effect, type Layer, type Redacted } from "effect"
import type { InstallationConfig } from "../../config/index.js"
import { builtinSecretDriverLayer } from "./builtin.js"
import type { SecretDriver } from "./driver.js"

/** What the selection reads from a process's configuration. */
export interface SecretDriverSettings {
  readonly process: {
    /** Loaded configurations always hold it; one put together by hand (a tool, a test) may not. */
    readonly secrets?: { readonly secretKey?: Redacted.Redacted<Uint8Array> | undefined } | undefined
    readonly previousSecretKeys?: ReadonlyArray<Redacted.Redacted<Uint8Array>> | undefined
  }
  readonly installation: Pick<InstallationConfig, "drivers">
}

/**
 * The Secret Driver the Installation selects (`drivers.secret`; only `builtin` exists) over the
 * process's keys, `SVC_SECRET_KEY` and `SVC_SECRET_KEY_PREVIOUS`. Each process's main.ts selects
 * it (DESIGN §10) and stops with exit 78 on the failure (`loadOrExit`). Without a key there is no
 * driver: never a random one, whose Secrets no other replica and no restart could reveal.
 */
export const selectSecretDriver = (settings: SecretDriverSettings): Effect.Effect<Layer.Layer<SecretDriver>, ConfigError.ConfigError> => {
  switch (settings.installation.drivers.secret.id) {
    case "builtin": {
      const current = settings.process.secrets?.secretKey
      return current === undefined
        ? Effect.fail(ConfigError.MissingData(["SVC_SECRET_KEY"], "the builtin Secret Driver seals every Secret with this key"))
        : Effect.succeed(builtinSecretDriverLayer({ current, previous: settings.process.previousSecretKeys ?? [] }))
    }
  }
}
