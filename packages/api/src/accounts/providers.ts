import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { Effect, Option } from "effect"

/** Which external sign-in providers the Installation configuration enables. */
export interface EnabledProviders {
  readonly codehost: boolean
  readonly idprovider: boolean
}

/**
 * Read once per group from the Installation configuration; a server built without one (tests,
 * tools) has the default configuration: no provider.
 */
export const enabledProviders: Effect.Effect<EnabledProviders> = Effect.map(
  Effect.serviceOption(InstallationConfiguration),
  (config) => {
    const providers = Option.getOrElse(config, () => defaultInstallationConfig).providers
    return { codehost: providers.codehost !== undefined, idprovider: providers.idprovider !== undefined }
  }
)

export const anyExternalProvider = (enabled: EnabledProviders): boolean => enabled.codehost || enabled.idprovider

/**
 * SPEC 5.4/6: with password sign-in only, every browser behind a shared ingress address shares
 * the per-email limits (there is no trusted-proxy setting to tell clients apart), so the API
 * says so once at start-up.
 */
export const warnIfPasswordOnly = (enabled: EnabledProviders): Effect.Effect<void> =>
  anyExternalProvider(enabled)
    ? Effect.void
    : Effect.logWarning("authentication.sign-in-limit-warning").pipe(
      Effect.annotateLogs({
        event: "authentication.sign-in-limit-warning",
        profile: "password-only",
        detail: "sign-in throttling is per email only (10 failures per minute); no trusted proxy is configured, so per-client-address limits are off"
      })
    )
