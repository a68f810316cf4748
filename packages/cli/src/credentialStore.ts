/**
 * Where `svc login` keeps what it signed in with: one JSON file, owner-only. The directory is
 * created 0700, the file written to a temporary sibling (0600) and renamed into place, so a
 * reader never sees half a file; a file that group or others can read is refused, never used.
 */
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { CredentialFileError, NotSignedIn } from "./failures.js"

export type StoredCredentials =
  | {
    readonly url: string
    readonly kind: "key"
    readonly key: string
    /** From a bootstrap key file, when it names them (for `whoami`). */
    readonly keyId?: string | undefined
    readonly servicePrincipalId?: string | undefined
  }
  | {
    readonly url: string
    readonly kind: "session"
    readonly email: string
    /** Cookie name to value, as the service set them at sign-in. */
    readonly cookies: Readonly<Record<string, string>>
  }

/** `$SVC_CONFIG_DIR/credentials.json`, else `$XDG_CONFIG_HOME/svc/…`, else `~/.config/svc/…`. */
export const credentialsPath = (env: NodeJS.ProcessEnv = process.env): string => {
  const dir = env.SVC_CONFIG_DIR !== undefined && env.SVC_CONFIG_DIR !== ""
    ? env.SVC_CONFIG_DIR
    : path.join(
      env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== "" ? env.XDG_CONFIG_HOME : path.join(os.homedir(), ".config"),
      "svc"
    )
  return path.resolve(dir, "credentials.json")
}

const errnoCode = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

const isStored = (value: unknown): value is StoredCredentials => {
  if (typeof value !== "object" || value === null) return false
  const record = value as Record<string, unknown>
  if (typeof record.url !== "string") return false
  if (record.kind === "key") return typeof record.key === "string"
  return record.kind === "session" && typeof record.email === "string" && typeof record.cookies === "object" && record.cookies !== null
}

/** The stored credentials, `None` when there is no file. */
export const readCredentials = (file: string): Effect.Effect<Option.Option<StoredCredentials>, CredentialFileError> =>
  Effect.tryPromise({
    try: async () => {
      const stat = await fs.lstat(file).catch((cause) => {
        if (errnoCode(cause) === "ENOENT") return undefined
        throw cause
      })
      if (stat === undefined) return Option.none()
      if (!stat.isFile()) throw new CredentialFileError({ message: `${file} is not a regular file; refusing to use it` })
      if ((stat.mode & 0o077) !== 0) {
        const mode = (stat.mode & 0o777).toString(8)
        throw new CredentialFileError({
          message: `${file} is readable or writable by others (mode ${mode}); refusing to use it: run chmod 600 on it or svc login again`
        })
      }
      const parsed: unknown = JSON.parse(await fs.readFile(file, "utf8"))
      if (!isStored(parsed)) throw new CredentialFileError({ message: `${file} is not a credential file written by svc login` })
      return Option.some(parsed)
    },
    catch: (cause) =>
      cause instanceof CredentialFileError
        ? cause
        : new CredentialFileError({ message: `${file} cannot be read (${errnoCode(cause) ?? "not JSON"})` })
  })

/** The stored credentials, or `NotSignedIn`. */
export const requireCredentials = (file: string): Effect.Effect<StoredCredentials, CredentialFileError | NotSignedIn> =>
  Effect.flatMap(readCredentials(file), Option.match({
    onNone: () => Effect.fail(new NotSignedIn({ message: "not signed in; run svc login first" })),
    onSome: Effect.succeed
  }))

export const writeCredentials = (file: string, credentials: StoredCredentials): Effect.Effect<void, CredentialFileError> =>
  Effect.tryPromise({
    try: async () => {
      const dir = path.dirname(file)
      await fs.mkdir(dir, { recursive: true, mode: 0o700 })
      const temporary = path.join(dir, `.credentials.${process.pid}.${crypto.randomBytes(4).toString("hex")}.tmp`)
      const handle = await fs.open(temporary, "wx", 0o600)
      try {
        await handle.chmod(0o600)
        await handle.writeFile(JSON.stringify(credentials, null, 2) + "\n", "utf8")
        await handle.sync()
      } finally {
        await handle.close()
      }
      try {
        await fs.rename(temporary, file)
      } catch (cause) {
        await fs.rm(temporary, { force: true })
        throw cause
      }
    },
    catch: (cause) => new CredentialFileError({ message: `${file} cannot be written (${errnoCode(cause) ?? "unknown error"})` })
  })

/** Whether a file was there to remove. */
export const removeCredentials = (file: string): Effect.Effect<boolean, CredentialFileError> =>
  Effect.tryPromise({
    try: () => fs.rm(file).then(() => true, (cause) => {
      if (errnoCode(cause) === "ENOENT") return false
      throw cause
    }),
    catch: (cause) => new CredentialFileError({ message: `${file} cannot be removed (${errnoCode(cause) ?? "unknown error"})` })
  })
