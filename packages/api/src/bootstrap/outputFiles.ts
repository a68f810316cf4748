import { Data, Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { withExportedSpan } from "@svc/core/observability"

/** Why a bootstrap output cannot be written; `reason` is a fixed code for the failure audit. */
export class OutputFileError extends Data.TaggedError("OutputFileError")<{
  readonly file: string
  readonly reason: "exists" | "unsafe-directory" | "write-failed"
  readonly problem: string
}> {
  override get message(): string {
    return `${this.file}: ${this.problem}`
  }
}

const errnoCode = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

const describe = (cause: unknown): string => errnoCode(cause) ?? (cause instanceof Error ? cause.name : "unknown error")

/**
 * A bootstrap output's directory must be a real directory (not a symbolic link) owned by this
 * process's user and writable by nobody else; development creates a missing one (mode 0700).
 */
const checkDirectory = async (file: string, createMissing: boolean): Promise<string | undefined> => {
  const dir = path.dirname(file)
  let stat = await fs.lstat(dir).catch((cause) => {
    if (errnoCode(cause) === "ENOENT") return undefined
    throw cause
  })
  if (stat === undefined) {
    if (!createMissing) return `its directory ${dir} does not exist`
    await fs.mkdir(dir, { recursive: true, mode: 0o700 })
    stat = await fs.lstat(dir)
  }
  if (stat.isSymbolicLink()) return `its directory ${dir} is a symbolic link`
  if (!stat.isDirectory()) return `${dir} is not a directory`
  const uid = process.getuid?.()
  if (uid !== undefined && stat.uid !== uid) return `its directory ${dir} is not owned by this user (uid ${uid})`
  if ((stat.mode & 0o022) !== 0) {
    return `its directory ${dir} is writable by group or others (mode ${(stat.mode & 0o777).toString(8)})`
  }
  return undefined
}

/**
 * Fails closed, before anything is created, when an output could not be written safely: its
 * directory is unsafe, or something (a file, a symbolic link, anything) is already there.
 */
export const checkOutputTarget = (file: string, options: { readonly createDirectory: boolean }) =>
  Effect.tryPromise({
    try: async () => {
      const unsafe = await checkDirectory(file, options.createDirectory)
      if (unsafe !== undefined) return new OutputFileError({ file, reason: "unsafe-directory", problem: unsafe })
      const existing = await fs.lstat(file).catch((cause) => {
        if (errnoCode(cause) === "ENOENT") return undefined
        throw cause
      })
      if (existing !== undefined) {
        const what = existing.isSymbolicLink() ? "a symbolic link" : "a file"
        return new OutputFileError({ file, reason: "exists", problem: `${what} already exists there; it is never replaced` })
      }
      return undefined
    },
    catch: (cause) => new OutputFileError({ file, reason: "unsafe-directory", problem: `cannot be checked (${describe(cause)})` })
  }).pipe(Effect.flatMap((error) => (error === undefined ? Effect.void : Effect.fail(error))))

const { O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = fs.constants

/**
 * Writes a one-time output (SPEC 5.6): created exclusively (an existing file or symbolic link
 * fails, nothing is followed), owner-only 0600, and synced, file and directory entry both, so
 * it is durable before the caller commits what it describes.
 */
export const writeOutputFile = (file: string, content: string) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await fs.open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
      try {
        await handle.chmod(0o600)
        await handle.writeFile(content, "utf8")
        await handle.sync()
      } finally {
        await handle.close()
      }
      const dir = await fs.open(path.dirname(file), O_RDONLY | O_DIRECTORY)
      try {
        await dir.sync()
      } finally {
        await dir.close()
      }
    },
    catch: (cause) =>
      errnoCode(cause) === "EEXIST" || errnoCode(cause) === "ELOOP"
        ? new OutputFileError({ file, reason: "exists", problem: "something already exists there; it is never replaced" })
        : new OutputFileError({ file, reason: "write-failed", problem: `could not be written (${describe(cause)})` })
  }).pipe(withExportedSpan("Bootstrap.writeOutputFile"))
