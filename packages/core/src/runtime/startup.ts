import { ConfigError, Effect, Layer, Option, Redacted } from "effect"
import {
  loadOrExit,
  loadStartupConfig,
  secretValues,
  type StartupConfig,
  startupConfigLayer
} from "../config/index.js"
import { observabilityLayer, selectLogFormat } from "../observability/index.js"

/** Variables, development secrets and the Installation file, or exit 78 with the problems. */
export const startupConfig: Effect.Effect<StartupConfig> = loadOrExit(loadStartupConfig)

/**
 * `DATABASE_URL` for a process of the production split (only `npm start` runs an embedded
 * PostgreSQL), or exit 78 naming the variable.
 */
export const requireDatabaseUrl = (config: StartupConfig, command: string): Effect.Effect<Redacted.Redacted<string>> =>
  loadOrExit(
    Option.match(config.process.databaseUrl, {
      onNone: () =>
        Effect.fail(
          ConfigError.MissingData(
            ["DATABASE_URL"],
            `required by svc ${command}; npm start runs an embedded PostgreSQL when it is unset`
          )
        ),
      onSome: Effect.succeed
    })
  )

/**
 * What every process runs with: scrubbed logs (every configured secret masked; JSON lines, or
 * readable lines on a development terminal), OTLP traces and metrics when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, and the loaded configuration as services.
 */
export const processLayer = (config: StartupConfig) =>
  Layer.mergeAll(
    observabilityLayer(config.process.telemetry, {
      secrets: secretValues(config),
      format: selectLogFormat(config.process.telemetry.logFormat, config.process.env, {
        isTTY: process.stdout.isTTY === true,
        noColor: (process.env.NO_COLOR ?? "") !== ""
      })
    }),
    startupConfigLayer(config)
  )
