import { describe, expect, it } from "@effect/vitest"
import {
  BootstrapConfig,
  DevSecretError,
  devSecretFiles,
  EX_CONFIG,
  formatStartupError,
  loadProcessConfig,
  ProcessConfig,
  resolveDevSecrets,
  secretValues
} from "@svc/core/config"
import { ConfigProvider, Effect, Either, LogLevel, Option, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const repoRoot = path.resolve(import.meta.dirname, "../../..")
const KEY = Buffer.alloc(32, 7).toString("base64")
const AUTH = "a-production-auth-secret-of-forty-chars!!"
const PRODUCTION = {
  SVC_ENV: "production",
  DATABASE_URL: "postgres://svc:db-password-1234@db.internal:5432/svc",
  SVC_AUTH_SECRET: AUTH,
  SVC_SECRET_KEY: KEY,
  SVC_BASE_URL: "https://svc.example.com"
}

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const settingsOf = (env: Record<string, string>) => Effect.runSync(ProcessConfig.pipe(withEnv(env)))

/** The formatted error of a configuration that must fail. */
const problemsOf = (env: Record<string, string>): string =>
  Either.match(Effect.runSync(Effect.either(ProcessConfig.pipe(withEnv(env)))), {
    onLeft: formatStartupError,
    onRight: () => expect.fail("expected the configuration to be rejected")
  })

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "svc-config-test-"))

describe("ProcessConfig", () => {
  it("has the documented defaults", () => {
    const settings = settingsOf({})
    expect(settings.env).toBe("development")
    expect(settings.dataDir).toBe(path.resolve(".svc-data"))
    expect(settings.host).toBe("127.0.0.1")
    expect(settings.port).toBe(8080)
    expect(settings.baseUrl).toBe("http://127.0.0.1:8080")
    expect(settings.maxBodyBytes).toBe(458752)
    expect(Option.isNone(settings.databaseUrl)).toBe(true)
    expect(Option.isNone(settings.authSecret)).toBe(true)
    expect(Option.isNone(settings.installationConfigPath)).toBe(true)
    expect(settings.telemetry.logLevel).toBe(LogLevel.Info)
    expect(settings.telemetry.serviceName).toBe("svc")
    expect(Option.isNone(settings.telemetry.otlpEndpoint)).toBe(true)
    expect(Option.isNone(settings.telemetry.metricsPort)).toBe(true)
    expect(settings.telemetry.metricsHost).toBe("127.0.0.1")
    // Development puts the bootstrap outputs under the data dir.
    expect(settings.bootstrap.keyPath).toEqual(Option.some(path.resolve(".svc-data/bootstrap-key.json")))
    expect(settings.bootstrap.passwordPath).toEqual(Option.some(path.resolve(".svc-data/bootstrap-password.txt")))
    expect(settings.bootstrap.adminEmail).toEqual(Option.some("admin@example.com"))
  })

  it("reads every variable", () => {
    const settings = settingsOf({
      ...PRODUCTION,
      SVC_DATA_DIR: "/var/lib/svc",
      SVC_HOST: "0.0.0.0",
      SVC_PORT: "0",
      SVC_BASE_URL: "https://svc.example.com/",
      SVC_INSTALLATION_CONFIG: "/etc/svc/installation.json",
      SVC_BOOTSTRAP_KEY_PATH: "/run/svc/bootstrap/key.json",
      SVC_BOOTSTRAP_PASSWORD_PATH: "/run/svc/bootstrap/password",
      SVC_BOOTSTRAP_ADMIN_EMAIL: "Ops@Example.com",
      SVC_MAX_BODY_BYTES: "1048576",
      SVC_LOG_LEVEL: "debug",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_SERVICE_NAME: "svc-api",
      SVC_METRICS_PORT: "9464",
      SVC_METRICS_HOST: "0.0.0.0"
    })
    expect(settings.env).toBe("production")
    expect(settings.dataDir).toBe("/var/lib/svc")
    expect(settings.host).toBe("0.0.0.0")
    expect(settings.port).toBe(0)
    expect(settings.baseUrl).toBe("https://svc.example.com")
    expect(settings.databaseUrl.pipe(Option.map(Redacted.value))).toEqual(Option.some(PRODUCTION.DATABASE_URL))
    expect(settings.authSecret.pipe(Option.map(Redacted.value))).toEqual(Option.some(AUTH))
    expect(settings.secretKey.pipe(Option.map((k) => Redacted.value(k).length))).toEqual(Option.some(32))
    expect(settings.installationConfigPath).toEqual(Option.some("/etc/svc/installation.json"))
    expect(settings.bootstrap.adminEmail).toEqual(Option.some("ops@example.com"))
    expect(settings.maxBodyBytes).toBe(1048576)
    expect(settings.telemetry.logLevel).toBe(LogLevel.Debug)
    expect(settings.telemetry.otlpEndpoint).toEqual(Option.some("http://collector:4318"))
    expect(settings.telemetry.serviceName).toBe("svc-api")
    expect(settings.telemetry.metricsPort).toEqual(Option.some(9464))
    expect(settings.telemetry.metricsHost).toBe("0.0.0.0")
  })

  it("treats an empty value as unset", () => {
    expect(settingsOf({ SVC_PORT: "", DATABASE_URL: " " }).port).toBe(8080)
    expect(Option.isNone(settingsOf({ DATABASE_URL: "" }).databaseUrl)).toBe(true)
  })

  // [variable, bad value, the rule the message states]
  const invalid: ReadonlyArray<readonly [string, string, string]> = [
    ["SVC_ENV", "prod", `expected one of "development", "production", got "prod"`],
    ["SVC_PORT", "abc", `expected an integer between 0 and 65535, got "abc"`],
    ["SVC_PORT", "65536", `expected an integer between 0 and 65535, got "65536"`],
    ["SVC_PORT", "80.5", `expected an integer between 0 and 65535`],
    ["SVC_HOST", "local host", "expected a value without whitespace"],
    ["SVC_BASE_URL", "ftp://example.com", `expected an http or https URL, got "ftp://example.com"`],
    ["SVC_BASE_URL", "example.com", "expected an http or https URL"],
    ["SVC_BASE_URL", "http://127.0.0.1:8080/?a=1", "without query or fragment"],
    ["SVC_MAX_BODY_BYTES", "lots", "expected an integer between 1024 and 67108864"],
    ["SVC_LOG_LEVEL", "loud", `expected one of all, trace, debug, info, warning, error, fatal, none, got "loud"`],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "expected an http or https URL"],
    ["OTEL_SERVICE_NAME", "svc api", "expected a value without whitespace"],
    ["SVC_BOOTSTRAP_KEY_PATH", "bootstrap.json", `expected an absolute path, got "bootstrap.json"`],
    ["SVC_BOOTSTRAP_PASSWORD_PATH", "pw.txt", `expected an absolute path, got "pw.txt"`],
    ["SVC_BOOTSTRAP_ADMIN_EMAIL", "nobody", "expected an email address of 3-320 characters"],
    ["DATABASE_URL", "mysql://u:hunter2-secret@h/db", "expected a postgres:// or postgresql:// URL"],
    ["SVC_AUTH_SECRET", "too-short-secret", "expected 32-4096 characters"],
    ["SVC_SECRET_KEY", Buffer.alloc(16, 1).toString("base64"), "expected 32 bytes encoded as base64"],
    ["SVC_SECRET_KEY", "not base64 at all!", "expected 32 bytes encoded as base64"],
    ["SVC_SECRET_KEY_PREVIOUS", `${Buffer.alloc(32, 2).toString("base64")},${Buffer.alloc(31, 3).toString("base64")}`, "entry 2: expected 32 bytes encoded as base64"],
    ["SVC_SECRET_KEY_PREVIOUS", " , ", "expected a comma-separated list of base64 keys"],
    ["SVC_DEV_ADMIN_PASSWORD", "short-pw", "expected 12-128 characters"],
    ["SVC_GATEWAY_HOST_ENV", "OPENAI_API_KEY, not-a-name", `expected a comma-separated list of environment variable names, got "not-a-name"`],
    ["SVC_TRUSTED_PROXIES", "10.0.0.1, proxy.local", `expected a comma-separated list of IP addresses or CIDR blocks, got "proxy.local"`],
    ["SVC_TRUSTED_PROXIES", "10.0.0.0/33", `got "10.0.0.0/33"`],
    ["SVC_TRUSTED_PROXIES", "fd00::/129", `got "fd00::/129"`]
  ]

  it.each(invalid)("rejects %s=%j naming the variable and the rule", (name, value, rule) => {
    const message = problemsOf({ [name]: value })
    expect(message).toContain(`${name}: `)
    expect(message).toContain(rule)
    expect(message.split("\n")).toHaveLength(1)
  })

  it("never prints the value of a secret variable", () => {
    const message = problemsOf({
      DATABASE_URL: "mysql://u:hunter2-secret@h/db",
      SVC_AUTH_SECRET: "too-short-secret",
      SVC_DEV_ADMIN_PASSWORD: "short-pw"
    })
    for (const secret of ["hunter2-secret", "too-short-secret", "short-pw"]) expect(message).not.toContain(secret)
    expect(message).toContain("value not shown")
  })

  it("reports every problem, one line each", () => {
    const lines = problemsOf({ SVC_PORT: "x", SVC_ENV: "staging", SVC_LOG_LEVEL: "?" }).split("\n")
    expect(lines.map((line) => line.split(":")[0]).sort()).toEqual(["SVC_ENV", "SVC_LOG_LEVEL", "SVC_PORT"])
  })

  it("requires the secrets and the database in production, naming each variable", () => {
    const message = problemsOf({ SVC_ENV: "production", SVC_BASE_URL: "https://svc.example.com" })
    expect(message.split("\n").sort()).toEqual([
      "DATABASE_URL: required when SVC_ENV=production",
      "SVC_AUTH_SECRET: required when SVC_ENV=production",
      "SVC_SECRET_KEY: required when SVC_ENV=production"
    ])
    const { SVC_AUTH_SECRET: _, ...withoutAuth } = PRODUCTION
    expect(problemsOf(withoutAuth)).toBe("SVC_AUTH_SECRET: required when SVC_ENV=production")
    expect(settingsOf(PRODUCTION).env).toBe("production")
  })

  it("rejects development-only and insecure settings in production", () => {
    expect(problemsOf({ ...PRODUCTION, SVC_DEV_ADMIN_PASSWORD: "a-long-enough-password" })).toBe(
      "SVC_DEV_ADMIN_PASSWORD: only allowed when SVC_ENV=development (value not shown)"
    )
    expect(problemsOf({ ...PRODUCTION, SVC_BASE_URL: "http://svc.example.com" })).toContain(
      "SVC_BASE_URL: expected an https URL when SVC_ENV=production"
    )
    // Loopback over http stays possible (local production-mode runs).
    expect(settingsOf({ ...PRODUCTION, SVC_BASE_URL: "http://127.0.0.1:8080" }).baseUrl).toBe("http://127.0.0.1:8080")
  })

  it("reads SVC_TRUSTED_PROXIES as a list of addresses and CIDR blocks, none by default", () => {
    expect(settingsOf({}).trustedProxies).toEqual([])
    expect(settingsOf({ SVC_TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.10,fd00::/8" }).trustedProxies).toEqual([
      "10.0.0.0/8",
      "192.0.2.10",
      "fd00::/8"
    ])
  })

  it("defaults SVC_BASE_URL to the listen address", () => {
    expect(settingsOf({}).baseUrl).toBe("http://127.0.0.1:8080")
    expect(settingsOf({ SVC_HOST: "0.0.0.0", SVC_PORT: "9000" }).baseUrl).toBe("http://0.0.0.0:9000")
    expect(settingsOf({ SVC_HOST: "::1", SVC_PORT: "9000" }).baseUrl).toBe("http://[::1]:9000")
  })

  it("requires the two bootstrap outputs to be distinct siblings", () => {
    expect(
      problemsOf({ SVC_BOOTSTRAP_KEY_PATH: "/run/a/key.json", SVC_BOOTSTRAP_PASSWORD_PATH: "/run/b/password" })
    ).toContain("SVC_BOOTSTRAP_PASSWORD_PATH: expected a different file in the same directory as SVC_BOOTSTRAP_KEY_PATH")
    expect(
      problemsOf({ SVC_BOOTSTRAP_KEY_PATH: "/run/a/key", SVC_BOOTSTRAP_PASSWORD_PATH: "/run/a/key" })
    ).toContain("SVC_BOOTSTRAP_PASSWORD_PATH: ")
  })
})

describe("BootstrapConfig", () => {
  it("needs the outputs and the administrator in production", () => {
    const result = Effect.runSync(Effect.either(BootstrapConfig.pipe(withEnv(PRODUCTION))))
    expect(Either.isLeft(result) && formatStartupError(result.left).split("\n").sort()).toEqual([
      "SVC_BOOTSTRAP_ADMIN_EMAIL: required when SVC_ENV=production to bootstrap",
      "SVC_BOOTSTRAP_KEY_PATH: required when SVC_ENV=production to bootstrap",
      "SVC_BOOTSTRAP_PASSWORD_PATH: required when SVC_ENV=production to bootstrap"
    ])
  })

  it("defaults under the data dir in development", () => {
    const settings = Effect.runSync(BootstrapConfig.pipe(withEnv({ SVC_DATA_DIR: "/srv/svc-dev" })))
    expect(settings).toEqual({
      keyPath: "/srv/svc-dev/bootstrap-key.json",
      passwordPath: "/srv/svc-dev/bootstrap-password.txt",
      adminEmail: "admin@example.com"
    })
  })
})

describe("development secrets", () => {
  it.effect("are generated once into the data dir, owner-only, and reused", () =>
    Effect.gen(function*() {
      const dataDir = path.join(tempDir(), "data")
      const settings = settingsOf({ SVC_DATA_DIR: dataDir })
      // Two processes starting at once must agree on one value.
      const [first, concurrent] = yield* Effect.all([resolveDevSecrets(settings), resolveDevSecrets(settings)], {
        concurrency: 2
      })
      const again = yield* resolveDevSecrets(settings)
      for (const file of Object.values(devSecretFiles)) {
        const stat = fs.statSync(path.join(dataDir, file))
        expect((stat.mode & 0o777).toString(8)).toBe("600")
      }
      expect(fs.readdirSync(dataDir).sort()).toEqual(Object.values(devSecretFiles).sort())
      expect(Redacted.value(first.authSecret).length).toBeGreaterThanOrEqual(32)
      expect(Redacted.value(first.secretKey)).toHaveLength(32)
      for (const other of [concurrent, again]) {
        expect(Redacted.value(other.authSecret)).toBe(Redacted.value(first.authSecret))
        expect(Buffer.from(Redacted.value(other.secretKey))).toEqual(Buffer.from(Redacted.value(first.secretKey)))
        expect(other.devAdminPassword.pipe(Option.map(Redacted.value))).toEqual(
          first.devAdminPassword.pipe(Option.map(Redacted.value))
        )
      }
      expect(fs.readFileSync(path.join(dataDir, devSecretFiles.authSecret), "utf8").trim()).toBe(
        Redacted.value(first.authSecret)
      )
    }))

  it.effect("use the variables when set and write nothing", () =>
    Effect.gen(function*() {
      const dataDir = path.join(tempDir(), "data")
      const loaded = yield* loadProcessConfig.pipe(
        withEnv({ SVC_DATA_DIR: dataDir, SVC_AUTH_SECRET: AUTH, SVC_SECRET_KEY: KEY, SVC_DEV_ADMIN_PASSWORD: "dev-password-123" })
      )
      expect(Redacted.value(loaded.secrets.authSecret)).toBe(AUTH)
      expect(Buffer.from(Redacted.value(loaded.secrets.secretKey)).toString("base64")).toBe(KEY)
      expect(loaded.secrets.devAdminPassword.pipe(Option.map(Redacted.value))).toEqual(Option.some("dev-password-123"))
      expect(fs.existsSync(dataDir)).toBe(false)
    }))

  it.effect("are never generated in production", () =>
    Effect.gen(function*() {
      const dataDir = path.join(tempDir(), "data")
      const loaded = yield* loadProcessConfig.pipe(withEnv({ ...PRODUCTION, SVC_DATA_DIR: dataDir }))
      expect(Redacted.value(loaded.secrets.authSecret)).toBe(AUTH)
      expect(Option.isNone(loaded.secrets.devAdminPassword)).toBe(true)
      expect(fs.existsSync(dataDir)).toBe(false)
    }))

  it.effect("refuse a secret file that others can read", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      const file = path.join(dataDir, devSecretFiles.authSecret)
      fs.writeFileSync(file, "x".repeat(40) + "\n", { mode: 0o644 })
      fs.chmodSync(file, 0o644)
      const error = yield* Effect.flip(resolveDevSecrets(settingsOf({ SVC_DATA_DIR: dataDir })))
      expect(error).toBeInstanceOf(DevSecretError)
      expect(formatStartupError(error)).toBe(
        `SVC_AUTH_SECRET: unset, and the development value in ${file} cannot be used: ` +
          "readable by others (mode 644); run chmod 600 on it"
      )
    }))

  it.effect("lists every secret value for log masking", () =>
    Effect.gen(function*() {
      const loaded = yield* loadProcessConfig.pipe(withEnv({ ...PRODUCTION, SVC_DATA_DIR: tempDir() }))
      const values = secretValues({ process: loaded })
      expect(values).toContain(AUTH)
      expect(values).toContain(KEY)
      expect(values).toContain("db-password-1234")
    }))

  it("reads the host variables runtime-authenticated gateways receive", () => {
    expect(settingsOf({ SVC_GATEWAY_HOST_ENV: "OPENAI_API_KEY, ANTHROPIC_API_KEY" }).gatewayHostEnvironment).toEqual(["OPENAI_API_KEY", "ANTHROPIC_API_KEY"])
    expect(settingsOf({}).gatewayHostEnvironment).toEqual([])
  })

  it.effect("reads older Secret keys for rotation and masks them too", () =>
    Effect.gen(function*() {
      const older = [Buffer.alloc(32, 7), Buffer.alloc(32, 8)]
      const env = { ...PRODUCTION, SVC_DATA_DIR: tempDir(), SVC_SECRET_KEY_PREVIOUS: older.map((k) => k.toString("base64")).join(", ") }
      const loaded = yield* loadProcessConfig.pipe(withEnv(env))
      expect(loaded.previousSecretKeys.map((k) => Buffer.from(Redacted.value(k)).toString("hex"))).toEqual(older.map((k) => k.toString("hex")))
      const values = secretValues({ process: loaded })
      for (const key of older) expect(values).toContain(key.toString("base64"))
      expect(settingsOf(PRODUCTION).previousSecretKeys).toEqual([])
      // The value is never part of an error message.
      const bad = `${older[0]!.toString("base64")},not-a-key-but-secret`
      const message = problemsOf({ SVC_SECRET_KEY_PREVIOUS: bad })
      expect(message).not.toContain("not-a-key-but-secret")
      expect(message).not.toContain(older[0]!.toString("base64"))
    }))
})

describe("loadOrExit", () => {
  const runMain = (env: Record<string, string>) =>
    spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { Effect } from "effect"
         import { loadOrExit, loadStartupConfig } from "@svc/core/config"
         const config = await Effect.runPromise(loadOrExit(loadStartupConfig))
         console.log("started on port " + config.process.port)`
      ],
      { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8", timeout: 30_000 }
    )

  it("prints one line per problem to stderr and exits with 78 (EX_CONFIG)", () => {
    const result = runMain({ SVC_PORT: "abc", SVC_ENV: "production", SVC_AUTH_SECRET: "short-but-secret" })
    expect(result.status).toBe(EX_CONFIG)
    expect(result.stdout).toBe("")
    expect(result.stderr.trim().split("\n").sort()).toEqual([
      "DATABASE_URL: required when SVC_ENV=production",
      "SVC_AUTH_SECRET: expected 32-4096 characters (value not shown)",
      "SVC_PORT: expected an integer between 0 and 65535, got \"abc\"",
      "SVC_SECRET_KEY: required when SVC_ENV=production"
    ])
    expect(result.stderr).not.toContain("short-but-secret")
  })

  it("stops on an invalid Installation configuration file", () => {
    const dir = tempDir()
    const file = path.join(dir, "installation.json")
    fs.writeFileSync(file, JSON.stringify({ drivers: { compute: { id: "cloud" } } }))
    const result = runMain({ SVC_DATA_DIR: dir, SVC_INSTALLATION_CONFIG: file })
    expect(result.status).toBe(EX_CONFIG)
    expect(result.stderr.trim()).toBe(
      `SVC_INSTALLATION_CONFIG (${file}): drivers.compute.id: Expected "local" | "kubernetes"`
    )
  })

  it("lets a valid configuration through", () => {
    const result = runMain({ SVC_DATA_DIR: tempDir(), SVC_PORT: "9999" })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout.trim()).toBe("started on port 9999")
  })
})
