/**
 * Start-up configuration failures as text for an operator: one line per problem, each naming the
 * variable (or file and JSON path) and the rule. Secret values are never printed.
 */
import { Cause, ConfigError } from "effect"
import { DevSecretError } from "./devSecrets.js"
import { InstallationConfigError } from "./installation/load.js"
import { RepositoryRegistryError } from "./installation/registryLoad.js"

const variableName = (path: ReadonlyArray<string>): string => (path.length === 0 ? "(configuration)" : path.join("_"))

const describe = (message: string, fallback: string): string =>
  message === "" || message === "<redacted>" || message.startsWith("Expected ") ? fallback : message

/** One line per leaf problem, in order, without duplicates. */
export const configErrorLines = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  const lines = ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
    orCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
    invalidDataCase: (_, path, message) => [`${variableName(path)}: ${describe(message, "invalid value (not shown)")}`],
    missingDataCase: (_, path, message) => [`${variableName(path)}: ${describe(message, "required but not set")}`],
    sourceUnavailableCase: (_, path, message) => [`${variableName(path)}: could not be read (${message})`],
    unsupportedCase: (_, path, message) => [`${variableName(path)}: ${message}`]
  })
  return [...new Set(lines)]
}

/** Text for any start-up failure: configuration errors in detail, anything else by its message. */
export const formatStartupError = (error: unknown): string => {
  if (ConfigError.isConfigError(error)) return configErrorLines(error).join("\n")
  if (
    error instanceof InstallationConfigError || error instanceof RepositoryRegistryError ||
    error instanceof DevSecretError
  ) return error.message
  if (Cause.isCause(error)) return Cause.pretty(error)
  return error instanceof Error ? error.message : String(error)
}
