/**
 * The operator variables of every process (DESIGN §3), as one pure `Config` description.
 * Reading files (development secrets generated into the data dir) is a separate step:
 * see `devSecrets.ts` and `loadProcessConfig` in `load.ts`.
 */
import { Config, ConfigError, Either, LogLevel, Option, Redacted } from "effect"
import * as path from "node:path"
import * as os from "node:os"
import * as V from "./variables.js"

export type Environment = "development" | "production"

/** Where bootstrap writes its one-time outputs (SPEC 5.6) and who the first administrator is. */
export interface BootstrapOutputs {
  /** `SVC_BOOTSTRAP_KEY_PATH`; development default `<dataDir>/bootstrap-key.json`. */
  readonly keyPath: Option.Option<string>
  /** `SVC_BOOTSTRAP_PASSWORD_PATH`; development default `<dataDir>/bootstrap-password.txt`. */
  readonly passwordPath: Option.Option<string>
  /** `SVC_BOOTSTRAP_ADMIN_EMAIL`; development default `admin@example.com`. */
  readonly adminEmail: Option.Option<string>
  /** `SVC_DEV_ADMIN_PASSWORD`; development only (rejected in production). */
  readonly devAdminPassword: Option.Option<Redacted.Redacted<string>>
}

export interface TelemetrySettings {
  /** `SVC_LOG_LEVEL`, default `info`. */
  readonly logLevel: LogLevel.LogLevel
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` (OTLP/HTTP base URL); traces and metrics are not exported when unset. */
  readonly otlpEndpoint: Option.Option<string>
  /** `OTEL_SERVICE_NAME`, default `svc`. */
  readonly serviceName: string
  /**
   * `SVC_LOG_FORMAT` (`json` or `pretty`); unset: pretty on a development terminal, JSON lines
   * otherwise (see `selectLogFormat`).
   */
  readonly logFormat: Option.Option<"json" | "pretty">
  /**
   * `SVC_METRICS_PORT`: the Prometheus text endpoint's port (0 picks a free one); unset, no
   * endpoint is opened.
   */
  readonly metricsPort: Option.Option<number>
  /** `SVC_METRICS_HOST`, default `127.0.0.1`: the endpoint is unauthenticated. */
  readonly metricsHost: string
}

export interface ProcessSettings {
  /** `SVC_ENV` */
  readonly env: Environment
  /** `SVC_DATA_DIR`, resolved to an absolute path. */
  readonly dataDir: string
  /** `SVC_RUNTIME_DIR`: where the local gateway runtime is installed; default `<dataDir>/runtime`. */
  readonly runtimeDir: string
  /** `DATABASE_URL`; unset means embedded PostgreSQL (development only). */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  /** `SVC_HOST` */
  readonly host: string
  /** `SVC_PORT` (0 picks a free port) */
  readonly port: number
  /** `SVC_BASE_URL`, without a trailing slash. */
  readonly baseUrl: string
  /** `SVC_AUTH_SECRET`; always present in production. Development generates one: `resolveDevSecrets`. */
  readonly authSecret: Option.Option<Redacted.Redacted<string>>
  /** `SVC_SECRET_KEY`, 32 bytes; always present in production. */
  readonly secretKey: Option.Option<Redacted.Redacted<Uint8Array>>
  /**
   * `SVC_SECRET_KEY_PREVIOUS`: older Secret keys, comma-separated, still able to reveal the
   * values they sealed while a rotation is under way (new values are sealed with the current key).
   */
  readonly previousSecretKeys: ReadonlyArray<Redacted.Redacted<Uint8Array>>
  /** `SVC_INSTALLATION_CONFIG`, resolved to an absolute path. */
  readonly installationConfigPath: Option.Option<string>
  readonly bootstrap: BootstrapOutputs
  /** `SVC_MAX_BODY_BYTES`: create-request body limit (SPEC 8: 448 KiB). */
  readonly maxBodyBytes: number
  /**
   * `SVC_TRUSTED_PROXIES`: addresses or CIDR blocks of reverse proxies whose `X-Forwarded-For`
   * names the client (SPEC 5.4 per-client-address sign-in limits). Empty: none trusted.
   */
  readonly trustedProxies: ReadonlyArray<string>
  /**
   * `SVC_PASSWORD_HASH_CONCURRENCY` (default: the number of cores) and `SVC_PASSWORD_HASH_QUEUE`
   * (default 16): how many password sign-ins (argon2 check and database work) run at once and
   * how many more may wait; past that, sign-in answers 503 (docs/decisions/identity.md).
   */
  readonly passwordHashing: { readonly concurrency: number; readonly queue: number }
  /**
   * `SVC_GATEWAY_HOST_ENV`: names of this host's environment variables that a gateway whose
   * Agent uses `runtime` harness authentication receives (SPEC 2.5: the operator supplies model
   * credentials in the host environment; the service never stores, logs or delivers them
   * elsewhere). Empty: none.
   */
  readonly gatewayHostEnvironment: ReadonlyArray<string>
  readonly telemetry: TelemetrySettings
}

export const defaults = {
  dataDir: ".svc-data",
  env: "development" as Environment,
  host: "127.0.0.1",
  port: 8080,
  baseUrl: "http://127.0.0.1:8080",
  maxBodyBytes: 448 * 1024,
  passwordHashQueue: 16,
  serviceName: "svc",
  devAdminEmail: "admin@example.com",
  bootstrapKeyFile: "bootstrap-key.json",
  bootstrapPasswordFile: "bootstrap-password.txt"
} as const

const isLoopback = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || /^127(\.[0-9]{1,3}){3}$/.test(hostname)

/**
 * `SVC_LOG_LEVEL`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, `SVC_LOG_FORMAT`,
 * `SVC_METRICS_PORT`, `SVC_METRICS_HOST`.
 */
export const TelemetryConfig: Config.Config<TelemetrySettings> = Config.all({
  logLevel: V.withDefault(V.variable("SVC_LOG_LEVEL", V.logLevel), LogLevel.Info),
  otlpEndpoint: V.optional(V.variable("OTEL_EXPORTER_OTLP_ENDPOINT", V.httpUrl)),
  serviceName: V.withDefault(V.variable("OTEL_SERVICE_NAME", V.noWhitespace), defaults.serviceName),
  logFormat: V.optional(V.variable("SVC_LOG_FORMAT", V.literal("json", "pretty"))),
  metricsPort: V.optional(V.variable("SVC_METRICS_PORT", V.integerBetween(0, 65535))),
  metricsHost: V.withDefault(V.variable("SVC_METRICS_HOST", V.noWhitespace), defaults.host)
})

const environment = V.withDefault(V.variable("SVC_ENV", V.literal("development", "production")), defaults.env)

/**
 * Rules that involve `SVC_ENV` are attached to the variable they concern, so every problem is
 * reported at once (a rule over the whole configuration would wait for all else to be valid).
 */
const dependingOnEnvironment = <A, B>(
  config: Config.Config<A>,
  rule: (env: Environment, value: A) => Either.Either<B, ConfigError.ConfigError>
): Config.Config<B> => Config.all([environment, config]).pipe(Config.mapOrFail(([env, value]) => rule(env, value)))

const requiredInProduction = <A>(name: string, config: Config.Config<Option.Option<A>>) =>
  dependingOnEnvironment(config, (env, value) =>
    env === "production" && Option.isNone(value)
      ? Either.left(ConfigError.MissingData([name], "required when SVC_ENV=production"))
      : Either.right(value))

const developmentOnly = <A>(name: string, config: Config.Config<Option.Option<A>>) =>
  dependingOnEnvironment(config, (env, value) =>
    env === "production" && Option.isSome(value)
      ? Either.left(ConfigError.InvalidData([name], "only allowed when SVC_ENV=development (value not shown)"))
      : Either.right(value))

const baseUrl = dependingOnEnvironment(
  V.optional(V.variable("SVC_BASE_URL", V.httpUrl)),
  (env, value) =>
    env === "production" && Option.isSome(value) && !value.value.startsWith("https:") &&
      !isLoopback(new URL(value.value).hostname)
      ? Either.left(ConfigError.InvalidData(
        ["SVC_BASE_URL"],
        V.expected("an https URL when SVC_ENV=production (session cookies are Secure)", value.value)
      ))
      : Either.right(value)
)

/** Unset, the base URL is where this process listens: `http://<SVC_HOST>:<SVC_PORT>`. */
const listenUrl = (host: string, port: number): string =>
  `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`

/** SPEC 5.6: the two bootstrap outputs are distinct siblings. */
const bootstrapPaths = Config.all({
  keyPath: V.optional(V.variable("SVC_BOOTSTRAP_KEY_PATH", V.absolutePath)),
  passwordPath: V.optional(V.variable("SVC_BOOTSTRAP_PASSWORD_PATH", V.absolutePath))
}).pipe(Config.mapOrFail((paths) => {
  if (Option.isNone(paths.keyPath) || Option.isNone(paths.passwordPath)) return Either.right(paths)
  const [key, password] = [path.normalize(paths.keyPath.value), path.normalize(paths.passwordPath.value)]
  return key === password || path.dirname(key) !== path.dirname(password)
    ? Either.left(ConfigError.InvalidData(
      ["SVC_BOOTSTRAP_PASSWORD_PATH"],
      V.expected(`a different file in the same directory as SVC_BOOTSTRAP_KEY_PATH (${key})`, password)
    ))
    : Either.right(paths)
}))

const raw = Config.all({
  env: environment,
  dataDir: V.withDefault(V.variable("SVC_DATA_DIR", V.text), defaults.dataDir),
  runtimeDir: V.optional(V.variable("SVC_RUNTIME_DIR", V.text)),
  databaseUrl: requiredInProduction("DATABASE_URL", V.optional(V.secretVariable("DATABASE_URL", V.postgresUrl))),
  host: V.withDefault(V.variable("SVC_HOST", V.noWhitespace), defaults.host),
  port: V.withDefault(V.variable("SVC_PORT", V.integerBetween(0, 65535)), defaults.port),
  baseUrl,
  authSecret: requiredInProduction(
    "SVC_AUTH_SECRET",
    V.optional(V.secretVariable("SVC_AUTH_SECRET", V.secretOfLength(32, 4096)))
  ),
  secretKey: requiredInProduction("SVC_SECRET_KEY", V.optional(V.secretVariable("SVC_SECRET_KEY", V.base64Key32))),
  previousSecretKeys: V.optional(V.secretVariable("SVC_SECRET_KEY_PREVIOUS", V.base64Key32List)),
  installationConfigPath: V.optional(V.variable("SVC_INSTALLATION_CONFIG", V.text)),
  bootstrapPaths,
  adminEmail: V.optional(V.variable("SVC_BOOTSTRAP_ADMIN_EMAIL", V.email)),
  devAdminPassword: developmentOnly(
    "SVC_DEV_ADMIN_PASSWORD",
    V.optional(V.secretVariable("SVC_DEV_ADMIN_PASSWORD", V.secretOfLength(12, 128)))
  ),
  maxBodyBytes: V.withDefault(
    V.variable("SVC_MAX_BODY_BYTES", V.integerBetween(1024, 64 * 1024 * 1024)),
    defaults.maxBodyBytes
  ),
  trustedProxies: V.withDefault(V.variable("SVC_TRUSTED_PROXIES", V.addressList), [] as ReadonlyArray<string>),
  passwordHashConcurrency: V.withDefault(
    V.variable("SVC_PASSWORD_HASH_CONCURRENCY", V.integerBetween(1, 256)),
    os.availableParallelism()
  ),
  passwordHashQueue: V.withDefault(
    V.variable("SVC_PASSWORD_HASH_QUEUE", V.integerBetween(0, 100_000)),
    defaults.passwordHashQueue
  ),
  gatewayHostEnvironment: V.withDefault(V.variable("SVC_GATEWAY_HOST_ENV", V.environmentNameList), [] as ReadonlyArray<string>),
  telemetry: TelemetryConfig
})

type Raw = Config.Config.Success<typeof raw>

const settle = (c: Raw): ProcessSettings => {
  const dataDir = path.resolve(c.dataDir)
  const development = c.env === "development"
  const devDefault = (value: Option.Option<string>, fallback: string) =>
    development ? Option.orElse(value, () => Option.some(fallback)) : value
  return {
    env: c.env,
    dataDir,
    runtimeDir: Option.match(c.runtimeDir, { onNone: () => path.join(dataDir, "runtime"), onSome: (p) => path.resolve(p) }),
    databaseUrl: c.databaseUrl,
    host: c.host,
    port: c.port,
    baseUrl: Option.getOrElse(c.baseUrl, () => listenUrl(c.host, c.port)),
    authSecret: c.authSecret,
    secretKey: c.secretKey,
    previousSecretKeys: Option.match(c.previousSecretKeys, {
      onNone: () => [],
      onSome: (keys) => Redacted.value(keys).map((key) => Redacted.make(key))
    }),
    installationConfigPath: Option.map(c.installationConfigPath, (p) => path.resolve(p)),
    bootstrap: {
      keyPath: devDefault(c.bootstrapPaths.keyPath, path.join(dataDir, defaults.bootstrapKeyFile)),
      passwordPath: devDefault(c.bootstrapPaths.passwordPath, path.join(dataDir, defaults.bootstrapPasswordFile)),
      adminEmail: devDefault(c.adminEmail, defaults.devAdminEmail),
      devAdminPassword: c.devAdminPassword
    },
    maxBodyBytes: c.maxBodyBytes,
    trustedProxies: c.trustedProxies,
    passwordHashing: { concurrency: c.passwordHashConcurrency, queue: c.passwordHashQueue },
    gatewayHostEnvironment: c.gatewayHostEnvironment,
    telemetry: c.telemetry
  }
}

const combine = (problems: ReadonlyArray<ConfigError.ConfigError>): ConfigError.ConfigError =>
  problems.slice(1).reduce((acc, next) => ConfigError.And(acc, next), problems[0]!)

/**
 * Every operator variable of DESIGN §3. All variables are read and every problem is reported,
 * not only the first.
 */
export const ProcessConfig: Config.Config<ProcessSettings> = Config.map(raw, settle)

export interface BootstrapSettings {
  readonly keyPath: string
  readonly passwordPath: string
  readonly adminEmail: string
}

/**
 * What `svc bootstrap` needs beyond `ProcessConfig`: in production the three variables are
 * required (development has defaults under the data dir).
 */
export const BootstrapConfig: Config.Config<BootstrapSettings> = ProcessConfig.pipe(
  Config.mapOrFail(({ bootstrap }) => {
    const problems: Array<ConfigError.ConfigError> = []
    const need = (name: string, value: Option.Option<string>): string => {
      if (Option.isNone(value)) {
        problems.push(ConfigError.MissingData([name], "required when SVC_ENV=production to bootstrap"))
        return ""
      }
      return value.value
    }
    const settings = {
      keyPath: need("SVC_BOOTSTRAP_KEY_PATH", bootstrap.keyPath),
      passwordPath: need("SVC_BOOTSTRAP_PASSWORD_PATH", bootstrap.passwordPath),
      adminEmail: need("SVC_BOOTSTRAP_ADMIN_EMAIL", bootstrap.adminEmail)
    }
    return problems.length === 0 ? Either.right(settings) : Either.left(combine(problems))
  })
)
