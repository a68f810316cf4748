/**
 * What each process's main.ts does first: read the variables, resolve development secrets,
 * read the Installation configuration file, and stop with exit code 78 (EX_CONFIG) and a
 * readable message when any of it is wrong.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { ConfigError } from "effect"
import * as fs from "node:fs"
import { DevSecretError, type ProcessSecrets, resolveDevSecrets } from "./devSecrets.js"
import { formatStartupError } from "./format.js"
import { InstallationConfigError, loadInstallationConfig } from "./installation/load.js"
import type { RepositoryRegistry } from "./installation/registry.js"
import { loadRepositoryRegistry, type RepositoryRegistryError } from "./installation/registryLoad.js"
import { nativeAdminConsoleProblems } from "./installation/nativeAdmin.js"
import type { InstallationConfig } from "./installation/schema.js"
import { ProcessConfig, type ProcessSettings } from "./process.js"

/** The operator variables and the secrets the process runs with. */
export interface LoadedProcessConfig extends ProcessSettings {
  readonly secrets: ProcessSecrets
}

export const loadProcessConfig: Effect.Effect<LoadedProcessConfig, ConfigError.ConfigError | DevSecretError> = Effect
  .gen(function*() {
    const settings = yield* ProcessConfig
    const secrets = yield* resolveDevSecrets(settings)
    return { ...settings, secrets }
  })

export interface StartupConfig {
  readonly process: LoadedProcessConfig
  readonly installation: InstallationConfig
  /** The `code_host` Backend's repository registry (SPEC 2.14), when one is configured. */
  readonly repositoryRegistry?: RepositoryRegistry | undefined
}

/** SPEC 5.8: the shared cookie domain must also be a parent of the console host (SVC_BASE_URL). */
const checkNativeAdmin = (installation: InstallationConfig, processConfig: LoadedProcessConfig) => {
  const problems = installation.nativeAdmin === undefined
    ? []
    : nativeAdminConsoleProblems(installation.nativeAdmin, processConfig.baseUrl)
  return problems.length === 0 ? Effect.void : Effect.fail(
    new InstallationConfigError({
      file: Option.getOrElse(processConfig.installationConfigPath, () => "(default)"),
      problems: problems.map((message) => ({ path: "nativeAdmin.cookieDomain", message }))
    })
  )
}

/** Variables, development secrets and the Installation configuration file, in that order. */
export const loadStartupConfig: Effect.Effect<
  StartupConfig,
  ConfigError.ConfigError | DevSecretError | InstallationConfigError | RepositoryRegistryError
> = Effect.gen(function*() {
  const processConfig = yield* loadProcessConfig
  const installation = yield* loadInstallationConfig(processConfig.installationConfigPath)
  yield* checkNativeAdmin(installation, processConfig)
  const repositoryRegistry = Option.getOrUndefined(yield* loadRepositoryRegistry(installation))
  return repositoryRegistry === undefined
    ? { process: processConfig, installation }
    : { process: processConfig, installation, repositoryRegistry }
})

/** Exit status for a configuration error (sysexits.h). */
export const EX_CONFIG = 78

/**
 * Runs a configuration-loading effect; on failure writes one line per problem to stderr and
 * exits the process with status 78. Run it before acquiring any resource (the exit is
 * immediate: finalizers do not run).
 */
export const loadOrExit = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
  Effect.catchAll(self, (error) =>
    Effect.sync((): never => {
      // Synchronous write: nothing may be lost to the exit that follows.
      fs.writeSync(2, `${formatStartupError(error)}\n`)
      return process.exit(EX_CONFIG)
    }))

/** The loaded process configuration, provided by each main.ts. */
export class ProcessConfiguration extends Context.Tag("@svc/core/config/ProcessConfiguration")<
  ProcessConfiguration,
  LoadedProcessConfig
>() {}

/** The Installation configuration, provided by each main.ts. */
export class InstallationConfiguration extends Context.Tag("@svc/core/config/InstallationConfiguration")<
  InstallationConfiguration,
  InstallationConfig
>() {}

/** Both configurations as one Layer, from an already loaded `StartupConfig`. */
export const startupConfigLayer = (config: StartupConfig): Layer.Layer<ProcessConfiguration | InstallationConfiguration> =>
  Layer.merge(
    Layer.succeed(ProcessConfiguration, config.process),
    Layer.succeed(InstallationConfiguration, config.installation)
  )

const databasePassword = (url: Redacted.Redacted<string>): ReadonlyArray<string> => {
  try {
    const password = new URL(Redacted.value(url)).password
    return password === "" ? [] : [password, decodeURIComponent(password)]
  } catch {
    return []
  }
}

/**
 * Every secret value the configuration holds, in the text forms it could appear in a log
 * (give them to the logger: `KnownSecrets.layer` in `@svc/core/observability`).
 */
export const secretValues = (config: {
  readonly process: LoadedProcessConfig
  readonly installation?: InstallationConfig | undefined
}): ReadonlyArray<string> => {
  const { process: p, installation } = config
  const keys = [p.secrets.secretKey, ...p.previousSecretKeys].map((k) => Buffer.from(Redacted.value(k)))
  const values = [
    Redacted.value(p.secrets.authSecret),
    ...keys.flatMap((key) => [key.toString("base64"), key.toString("base64url"), key.toString("hex")]),
    ...Option.match(p.secrets.devAdminPassword, { onNone: () => [], onSome: (v) => [Redacted.value(v)] }),
    ...Option.match(p.databaseUrl, { onNone: () => [], onSome: databasePassword }),
    // The operator's model credentials that runtime-authenticated gateways receive.
    ...p.gatewayHostEnvironment.flatMap((name) => {
      const value = process.env[name]
      return value === undefined || value.length < 8 ? [] : [value]
    })
  ]
  for (const provider of [installation?.providers.codehost, installation?.providers.idprovider]) {
    if (provider !== undefined) values.push(Redacted.value(provider.clientSecret))
  }
  return [...new Set(values)]
}
