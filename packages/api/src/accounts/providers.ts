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
 * SPEC 5.4/6: with password sign-in only and no trusted proxy (`SVC_TRUSTED_PROXIES`), every
 * browser behind an ingress shares its address and only the per-email limit protects
 * accounts, so the API says so once at start-up.
 */
export const warnIfPasswordOnly = (enabled: EnabledProviders, behindTrustedProxy: boolean): Effect.Effect<void> =>
  anyExternalProvider(enabled) || behindTrustedProxy
    ? Effect.void
    : Effect.logWarning("authentication.sign-in-limit-warning").pipe(
      Effect.annotateLogs({
        event: "authentication.sign-in-limit-warning",
        profile: "password-only",
        detail: "browsers behind a shared ingress address cannot be told apart: sign-in throttling is per email only (10 failures per minute); set SVC_TRUSTED_PROXIES to add the per-client-address limit"
      })
    )
