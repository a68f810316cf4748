/**
 * Reading the Installation configuration file at start-up. A missing or unreadable file, bad
 * JSON or content that breaks the schema stops the process (see `loadOrExit`) with one line per
 * problem: the JSON path and the rule.
 */
import { Data, Effect, Either, Option, ParseResult, Schema } from "effect"
import * as fs from "node:fs/promises"
import { defaultInstallationConfig, InstallationConfig } from "./schema.js"
import { fromSpecSpelling } from "./specSpelling.js"

export interface InstallationConfigProblem {
  /** JSON path inside the file, e.g. `backends[0].configuration.apiKeyPath`; empty for the file itself. */
  readonly path: string
  readonly message: string
}

export class InstallationConfigError extends Data.TaggedError("InstallationConfigError")<{
  readonly file: string
  readonly problems: ReadonlyArray<InstallationConfigProblem>
}> {
  override get message(): string {
    return this.problems.map((p) => `SVC_INSTALLATION_CONFIG (${this.file}): ${p.path === "" ? "" : `${p.path}: `}${p.message}`)
      .join("\n")
  }
}

/** `["backends", 0, "id"]` -> `backends[0].id` */
export const formatJsonPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) =>
    typeof key === "number"
      ? `${out}[${key}]`
      : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(String(key))
      ? out === "" ? String(key) : `${out}.${String(key)}`
      : `${out}[${JSON.stringify(String(key))}]`, "")

/** Quoted input strings may be secrets put in the wrong place: the rule is enough. */
const withoutQuotedActual = (message: string): string => message.replace(/, actual "(?:[^"\\]|\\.)*"$/s, "")

const readErrorText: Record<string, string> = {
  ENOENT: "file not found",
  EACCES: "permission denied",
  EISDIR: "is a directory, expected a JSON file"
}

const jsonPosition = (text: string, error: unknown): string => {
  const match = /position (\d+)/.exec(error instanceof Error ? error.message : "")
  if (!match) return ""
  const before = text.slice(0, Number(match[1]))
  const line = before.split("\n").length
  const column = before.length - before.lastIndexOf("\n")
  return ` at line ${line}, column ${column}`
}

/** Decodes already-parsed JSON; every problem is reported, not only the first. */
export const decodeInstallationConfig = (
  file: string,
  input: unknown
): Either.Either<InstallationConfig, InstallationConfigError> => {
  // SPEC 2.15's own key names are accepted too (specSpelling.ts).
  const respelled = fromSpecSpelling(input)
  if (respelled.conflicts.length > 0) return Either.left(new InstallationConfigError({ file, problems: respelled.conflicts }))
  return Schema.decodeUnknownEither(InstallationConfig, { onExcessProperty: "error", errors: "all" })(respelled.input).pipe(
    Either.mapLeft((error) => new InstallationConfigError({ file, problems: problemsOf(error, respelled.pathInFile) }))
  )
}

/** Reads and parses a JSON file; each failure is one problem for the file itself. */
export const readJsonFile = (file: string): Effect.Effect<unknown, ReadonlyArray<InstallationConfigProblem>> =>
  Effect.tryPromise({
    try: () => fs.readFile(file, "utf8"),
    catch: (cause) => {
      const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""
      return [{ path: "", message: `cannot read: ${readErrorText[code] ?? (code || String(cause))}` }]
    }
  }).pipe(
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        // The parser's own message may quote the content (possibly a secret): position only.
        catch: (error) => [{ path: "", message: `is not valid JSON${jsonPosition(text, error)}` }]
      })
    )
  )

/** Schema problems as `{path, message}`, paths in JSON notation, quoted input values dropped. */
export const problemsOf = (
  error: ParseResult.ParseError,
  pathInFile: (path: ReadonlyArray<PropertyKey>) => ReadonlyArray<PropertyKey> = (path) => path
): ReadonlyArray<InstallationConfigProblem> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.length === 0 ? "(root)" : formatJsonPath(pathInFile(issue.path)),
    message: withoutQuotedActual(issue.message)
  }))

/**
 * The Installation configuration: the file at `file` when given (absolute path), otherwise the
 * defaults of DESIGN §3 (IAM builtin, Compute local, Secret builtin, no Backends).
 */
export const loadInstallationConfig = (
  file: Option.Option<string>
): Effect.Effect<InstallationConfig, InstallationConfigError> =>
  Option.match(file, {
    onNone: () => Effect.succeed(defaultInstallationConfig),
    onSome: (file) =>
      readJsonFile(file).pipe(
        Effect.mapError((problems) => new InstallationConfigError({ file, problems })),
        Effect.flatMap((json) => decodeInstallationConfig(file, json))
      )
  })
