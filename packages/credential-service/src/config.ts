/**
 * The credential service's own variables (DESIGN §12), read with Effect `Config` at start-up:
 * the control socket, and where the client listener listens and how clients reach it.
 */
import { ConfigError, Config, Effect, Option } from "effect"
import type { StartupConfig } from "@svc/core/config"
import type { RepositoryRegistry } from "@svc/core/config"
import * as path from "node:path"

export interface CredentialServiceConfig {
  readonly socketPath: string
  readonly listenHost: string
  readonly listenPort: number
  /** Set: the listener's public origin; unset: `http://host:port` of the listener itself. */
  readonly publicUrl: Option.Option<string>
}

export const credentialServiceConfig = (config: StartupConfig) =>
  Config.all({
    socketPath: Config.string("SVC_CREDENTIAL_CONTROL_SOCKET").pipe(
      Config.withDefault(path.join(config.process.dataDir, "credential-service", "control.sock")),
      Config.map((p) => path.resolve(p))
    ),
    listenHost: Config.string("SVC_CREDENTIAL_LISTEN_HOST").pipe(Config.withDefault("127.0.0.1")),
    listenPort: Config.port("SVC_CREDENTIAL_LISTEN_PORT").pipe(Config.withDefault(8443)),
    publicUrl: Config.option(
      Config.string("SVC_CREDENTIAL_PUBLIC_URL").pipe(
        Config.validate({
          message: "must be an http(s) origin without a trailing slash",
          validation: (s) => /^https?:\/\/[^/?#@]+$/.test(s)
        })
      )
    )
  })

/** The registry the service hands out sessions for; without a code_host Backend it cannot run. */
export const requireRegistry = (config: StartupConfig): Effect.Effect<RepositoryRegistry, ConfigError.ConfigError> =>
  config.repositoryRegistry === undefined
    ? Effect.fail(ConfigError.MissingData(
      ["SVC_INSTALLATION_CONFIG"],
      "svc credential-service needs a code_host Backend with a registryPath in the Installation configuration"
    ))
    : Effect.succeed(config.repositoryRegistry)
