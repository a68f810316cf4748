/**
 * Development secrets: when `SVC_ENV=development` and a secret variable is unset, a random value
 * is generated once into a file under the data dir (owner-only, 0600) and reused by every later
 * start and by every process sharing the data dir. Production never generates: `ProcessConfig`
 * already requires the variables there.
 */
import { Data, Effect, Either, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { ProcessSettings } from "./process.js"
import * as V from "./variables.js"

export class DevSecretError extends Data.TaggedError("DevSecretError")<{
  /** The variable that would have avoided generation, e.g. `SVC_AUTH_SECRET`. */
  readonly variable: string
  readonly file: string
  /** What went wrong, never the secret itself. */
  readonly reason: string
}> {
  override get message(): string {
    return `${this.variable}: unset, and the development value in ${this.file} cannot be used: ${this.reason}`
  }
}

/** The file names under the data dir. */
export const devSecretFiles = {
  authSecret: "auth-secret",
  secretKey: "secret-key",
  devAdminPassword: "dev-admin-password"
} as const

interface Spec<A> {
  readonly variable: string
  readonly file: string
  readonly generate: () => string
  readonly parse: V.Parse<A>
}

const errnoCode = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

/**
 * Publishes `content` at `file` only if nothing is there yet: written to a private temporary
 * file, synced, then hard-linked into place (atomic; a concurrent starter sees all or nothing).
 */
const publishOnce = async (file: string, content: string): Promise<void> => {
  const temporary = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`
  const handle = await fs.open(temporary, "wx", 0o600)
  try {
    await handle.writeFile(content + "\n", "utf8")
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await fs.link(temporary, file)
  } catch (cause) {
    if (errnoCode(cause) !== "EEXIST") throw cause
  } finally {
    await fs.rm(temporary, { force: true })
  }
}

const readOrGenerate = <A>(dataDir: string, spec: Spec<A>): Effect.Effect<Redacted.Redacted<A>, DevSecretError> => {
  const file = path.join(dataDir, spec.file)
  const fail = (reason: string) => new DevSecretError({ variable: spec.variable, file, reason })
  return Effect.tryPromise({
    try: async () => {
      await fs.mkdir(dataDir, { recursive: true, mode: 0o700 })
      const existing = await fs.lstat(file).catch((cause) => {
        if (errnoCode(cause) === "ENOENT") return undefined
        throw cause
      })
      if (existing === undefined) await publishOnce(file, spec.generate())
      const stat = await fs.lstat(file)
      if (!stat.isFile()) return Either.left("not a regular file (symbolic links are refused)")
      if ((stat.mode & 0o077) !== 0) {
        return Either.left(`readable by others (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 on it`)
      }
      const content = (await fs.readFile(file, "utf8")).replace(/\r?\n$/, "")
      return Either.mapLeft(spec.parse(content), (rule) => `invalid content: ${rule}`)
    },
    catch: (cause) => fail(errnoCode(cause) ?? String(cause))
  }).pipe(
    Effect.flatMap(Either.match({ onLeft: (reason) => Effect.fail(fail(reason)), onRight: Effect.succeed })),
    Effect.map(Redacted.make)
  )
}

const random = (bytes: number, encoding: BufferEncoding) => () => crypto.randomBytes(bytes).toString(encoding)

export interface ProcessSecrets {
  readonly authSecret: Redacted.Redacted<string>
  readonly secretKey: Redacted.Redacted<Uint8Array>
  /** Development only: the configured administrator's password. */
  readonly devAdminPassword: Option.Option<Redacted.Redacted<string>>
}

/**
 * The secrets a process runs with: the variables when set; in development, otherwise, the
 * values generated once under the data dir.
 */
export const resolveDevSecrets = (settings: ProcessSettings): Effect.Effect<ProcessSecrets, DevSecretError> => {
  const orGenerate = <A>(value: Option.Option<Redacted.Redacted<A>>, spec: Spec<A>) =>
    Option.match(value, {
      onSome: (v) => Effect.succeed(v),
      onNone: () =>
        settings.env === "production"
          // ProcessConfig requires the variables in production; never generate there.
          ? Effect.fail(new DevSecretError({ variable: spec.variable, file: "", reason: "required when SVC_ENV=production" }))
          : readOrGenerate(settings.dataDir, spec)
    })
  return Effect.all({
    authSecret: orGenerate(settings.authSecret, {
      variable: "SVC_AUTH_SECRET",
      file: devSecretFiles.authSecret,
      generate: random(32, "base64url"),
      parse: V.secretOfLength(32, 4096)
    }),
    secretKey: orGenerate(settings.secretKey, {
      variable: "SVC_SECRET_KEY",
      file: devSecretFiles.secretKey,
      generate: random(32, "base64"),
      parse: V.base64Key32
    }),
    devAdminPassword: settings.env === "production"
      ? Effect.succeed(Option.none())
      : Effect.asSome(orGenerate(settings.bootstrap.devAdminPassword, {
        variable: "SVC_DEV_ADMIN_PASSWORD",
        file: devSecretFiles.devAdminPassword,
        generate: random(18, "base64url"),
        parse: V.secretOfLength(12, 128)
      }))
  })
}
