import { InstallationConfiguration, ProcessConfiguration } from "@svc/core/config"
import type { OAuthProvider } from "@svc/core/config"
import { Context, Effect, Layer } from "effect"

import { PROVIDERS, type ProviderId } from "@svc/core/api"

export { PROVIDERS, type ProviderId }

/** What external sign-in needs from the configuration. */
export interface ExternalSignInSettingsShape {
  /** SVC_BASE_URL without a trailing slash: callback URLs and the console live under it. */
  readonly baseUrl: string
  /** The configured providers (Installation configuration file, `providers`). */
  readonly providers: Partial<Record<ProviderId, OAuthProvider>>
}

/**
 * A Reference whose default is "no provider configured", so a server assembled without it
 * (tests of other groups) answers 404 on the provider routes instead of failing to build.
 * `ApiServerLive` provides the configured value (`fromConfiguration`).
 */
export class ExternalSignInSettings extends Context.Reference<ExternalSignInSettings>()(
  "@svc/api/ExternalSignInSettings",
  { defaultValue: (): ExternalSignInSettingsShape => ({ baseUrl: "http://127.0.0.1:8080", providers: {} }) }
) {
  static readonly make = (options: {
    readonly baseUrl: string
    readonly providers: Partial<Record<ProviderId, OAuthProvider>>
  }): ExternalSignInSettingsShape => ({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    providers: options.providers
  })

  /** From the loaded process and Installation configuration (each main.ts provides them). */
  static readonly fromConfiguration = Layer.effect(
    ExternalSignInSettings,
    Effect.gen(function* () {
      const process = yield* ProcessConfiguration
      const installation = yield* InstallationConfiguration
      return ExternalSignInSettings.make({ baseUrl: process.baseUrl, providers: installation.providers })
    })
  )
}
