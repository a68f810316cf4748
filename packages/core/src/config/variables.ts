/**
 * Building blocks for operator variables: each reads one environment variable, treats an empty
 * value as unset, and fails with a message that states the rule (never the value of a secret).
 * The variable name is added to the error path by `Config.nested`, so every failure names it.
 */
import { Config, ConfigError, Either, LogLevel, Option, Redacted } from "effect"
import * as net from "node:net"

/** Parses a raw (non-empty) value, or returns the rule it breaks. */
export type Parse<A> = (raw: string) => Either.Either<A, string>

const quote = (raw: string): string => JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}...` : raw)

/** `expected <rule>, got "<raw>"`: for non-secret values only. */
export const expected = (rule: string, raw: string): string => `expected ${rule}, got ${quote(raw)}`

const isBlank = (raw: string): boolean => raw.trim() === ""

/** A required, non-secret variable; surrounding whitespace is ignored. */
export const variable = <A>(name: string, parse: Parse<A>): Config.Config<A> =>
  Config.nested(
    Config.string().pipe(
      Config.mapOrFail((raw) =>
        isBlank(raw)
          ? Either.left(ConfigError.MissingData([], "is set but empty"))
          : Either.mapLeft(parse(raw.trim()), (rule) => ConfigError.InvalidData([], rule))
      )
    ),
    name
  )

/**
 * A required secret variable. The value is kept as given (no trimming) and is never part of an
 * error message: `parse` must describe the rule without quoting the value.
 */
export const secretVariable = <A>(name: string, parse: Parse<A>): Config.Config<Redacted.Redacted<A>> =>
  Config.nested(
    Config.redacted().pipe(
      Config.mapOrFail((value) => {
        const raw = Redacted.value(value)
        return isBlank(raw)
          ? Either.left(ConfigError.MissingData([], "is set but empty"))
          : Either.mapBoth(parse(raw), {
            onLeft: (rule) => ConfigError.InvalidData([], rule),
            onRight: (a) => Redacted.make(a)
          })
      })
    ),
    name
  )

/** Unset (or empty) becomes `Option.none()`; a set but invalid value still fails. */
export const optional = <A>(config: Config.Config<A>): Config.Config<Option.Option<A>> => Config.option(config)

export const withDefault = <A>(config: Config.Config<A>, value: A): Config.Config<A> =>
  Config.withDefault(config, value)

// Parsers ---------------------------------------------------------------------------------------

export const text: Parse<string> = (raw) => Either.right(raw)

export const literal = <const L extends string>(...literals: ReadonlyArray<L>): Parse<L> => (raw) =>
  (literals as ReadonlyArray<string>).includes(raw)
    ? Either.right(raw as L)
    : Either.left(expected(`one of ${literals.map((l) => JSON.stringify(l)).join(", ")}`, raw))

export const integerBetween = (min: number, max: number): Parse<number> => (raw) => {
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isSafeInteger(n) && n >= min && n <= max
    ? Either.right(n)
    : Either.left(expected(`an integer between ${min} and ${max}`, raw))
}

export const noWhitespace: Parse<string> = (raw) =>
  /\s/.test(raw) ? Either.left(expected("a value without whitespace", raw)) : Either.right(raw)

/** An http(s) URL without credentials, query or fragment; returned without a trailing slash. */
export const httpUrl: Parse<string> = (raw) => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(expected("an http or https URL", raw))
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Either.left(expected("an http or https URL", raw))
  }
  if (url.username !== "" || url.password !== "") {
    return Either.left("expected an http or https URL without user name or password")
  }
  if (url.search !== "" || url.hash !== "") {
    return Either.left(expected("an http or https URL without query or fragment", raw))
  }
  return Either.right(url.toString().replace(/\/+$/, ""))
}

/** A PostgreSQL connection URL. Secret: the rule never quotes the value. */
export const postgresUrl: Parse<string> = (raw) => {
  try {
    const url = new URL(raw)
    if (url.protocol === "postgres:" || url.protocol === "postgresql:") return Either.right(raw)
  } catch {
    // fall through
  }
  return Either.left("expected a postgres:// or postgresql:// URL (value not shown)")
}

export const absolutePathRule = "an absolute path"

export const isAbsolutePath = (raw: string): boolean => raw.startsWith("/") && !raw.includes("\0")

export const absolutePath: Parse<string> = (raw) =>
  isAbsolutePath(raw) ? Either.right(raw) : Either.left(expected(absolutePathRule, raw))

export const email: Parse<string> = (raw) =>
  raw.length >= 3 && raw.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(raw)
    ? Either.right(raw.toLowerCase())
    : Either.left(expected("an email address of 3-320 characters", raw))

/** A secret of bounded length (characters). */
export const secretOfLength = (min: number, max: number): Parse<string> => (raw) =>
  raw.length >= min && raw.length <= max
    ? Either.right(raw)
    : Either.left(`expected ${min}-${max} characters (value not shown)`)

/** Exactly 32 bytes, base64 (standard or URL-safe alphabet). */
export const base64Key32: Parse<Uint8Array> = (raw) => {
  const trimmed = raw.trim()
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed, trimmed.includes("-") || trimmed.includes("_") ? "base64url" : "base64")
    if (bytes.length === 32) return Either.right(new Uint8Array(bytes))
  }
  return Either.left("expected 32 bytes encoded as base64, e.g. from `openssl rand -base64 32` (value not shown)")
}

/** A comma-separated list of environment variable names (`^[A-Za-z_][A-Za-z0-9_]*$`). */
export const environmentNameList: Parse<ReadonlyArray<string>> = (raw) => {
  const entries = raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  const bad = entries.find((entry) => !/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(entry))
  return bad === undefined && entries.length > 0
    ? Either.right(entries)
    : Either.left(expected("a comma-separated list of environment variable names", bad ?? raw))
}

/** A comma-separated list of keys, each exactly 32 bytes of base64 (older Secret keys). */
export const base64Key32List: Parse<ReadonlyArray<Uint8Array>> = (raw) => {
  const entries = raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  const keys: Array<Uint8Array> = []
  for (const [index, entry] of entries.entries()) {
    const parsed = base64Key32(entry)
    if (Either.isLeft(parsed)) return Either.left(`entry ${index + 1}: ${parsed.left}`)
    keys.push(parsed.right)
  }
  return keys.length > 0 ? Either.right(keys) : Either.left("expected a comma-separated list of base64 keys (value not shown)")
}

const logLevels: ReadonlyArray<LogLevel.LogLevel> = [
  LogLevel.All,
  LogLevel.Trace,
  LogLevel.Debug,
  LogLevel.Info,
  LogLevel.Warning,
  LogLevel.Error,
  LogLevel.Fatal,
  LogLevel.None
]

export const logLevel: Parse<LogLevel.LogLevel> = (raw) => {
  const wanted = raw.toLowerCase() === "warn" ? "warning" : raw.toLowerCase()
  const found = logLevels.find((level) => level._tag.toLowerCase() === wanted)
  return found
    ? Either.right(found)
    : Either.left(expected(`one of ${logLevels.map((l) => l._tag.toLowerCase()).join(", ")}`, raw))
}

/** One address or CIDR block, IPv4 or IPv6: `10.0.0.5`, `10.0.0.0/8`, `::1`, `fd00::/8`. */
const addressOrBlock = (entry: string): boolean => {
  const [address, prefix, ...rest] = entry.split("/")
  const family = net.isIP(address ?? "")
  if (family === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  const bits = Number(prefix)
  return /^[0-9]{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128)
}

/** A comma-separated list of IP addresses or CIDR blocks. */
export const addressList: Parse<ReadonlyArray<string>> = (raw) => {
  const entries = raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  const bad = entries.find((entry) => !addressOrBlock(entry))
  return bad === undefined && entries.length > 0
    ? Either.right(entries)
    : Either.left(expected("a comma-separated list of IP addresses or CIDR blocks", bad ?? raw))
}
