/**
 * Keeping secrets out of logs. Three rules, applied to every log record:
 * 1. values under secret-looking keys (`password`, `token`, `apiKey`, `cookie`, ...) become
 *    `<redacted>`, at any depth;
 * 2. `Redacted` values stay `<redacted>`;
 * 3. every text is masked for the known secret values of this fiber (`KnownSecrets`), for
 *    credentials in URLs (`postgres://user:<redacted>@host`), `Bearer`/`Basic` credentials and
 *    `password=...`-style pairs.
 */
import { Effect, FiberRef, Inspectable, Layer, Predicate, Redacted } from "effect"
import { globalValue } from "effect/GlobalValue"

export const REDACTED = "<redacted>"

/** Shorter values are not treated as secrets: masking them would garble ordinary text. */
export const MIN_SECRET_LENGTH = 6

/** Known secret values, longest first (so a secret containing another is masked whole). */
export const currentKnownSecrets: FiberRef.FiberRef<ReadonlyArray<string>> = globalValue(
  Symbol.for("@svc/core/observability/currentKnownSecrets"),
  () => FiberRef.unsafeMake<ReadonlyArray<string>>([])
)

type SecretInput = string | Redacted.Redacted<string>

const addSecrets = (values: Iterable<SecretInput>) => (current: ReadonlyArray<string>): ReadonlyArray<string> => {
  const all = new Set(current)
  for (const value of values) {
    const text = Redacted.isRedacted(value) ? Redacted.value(value) : value
    if (text.length >= MIN_SECRET_LENGTH) all.add(text)
  }
  return [...all].sort((a, b) => b.length - a.length)
}

/** Registers secret values (from configuration, generated keys, ...) for masking in logs. */
export const KnownSecrets = {
  /** For everything built with this Layer: main.ts provides it with the configuration's secrets. */
  layer: (values: Iterable<SecretInput>): Layer.Layer<never> =>
    Layer.scopedDiscard(Effect.locallyScopedWith(currentKnownSecrets, addSecrets(values))),
  /** For one effect. */
  with: (values: Iterable<SecretInput>) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locallyWith(self, currentKnownSecrets, addSecrets(values)),
  /** For the rest of the current fiber (and fibers it forks afterwards). */
  register: (values: Iterable<SecretInput>): Effect.Effect<void> =>
    FiberRef.update(currentKnownSecrets, addSecrets(values))
}

const nonSecretSuffix = /(id|ids|path|file|name|names|count|length|version|type|kind|mode|expiresat|expiresin)$/
const secretWord =
  /password|passwd|passphrase|secret|token|authori[sz]ation|cookie|credential|signature|apikey|privatekey|sessionkey|accesskey|key$/

/** Whether a field name suggests its value is secret (`password`, `x-api-key`, `sessionKey`, ...). */
export const isSecretKey = (key: string): boolean => {
  const normalized = key.toLowerCase().replace(/[^a-z0-9]/g, "")
  return secretWord.test(normalized) && !nonSecretSuffix.test(normalized)
}

const textRules: ReadonlyArray<readonly [RegExp, string]> = [
  // scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s/@]+@/gi, `$1${REDACTED}@`],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/-]+=*/g, `$1 ${REDACTED}`],
  [
    /\b(password|passwd|secret|token|api[_-]?key|authorization|cookie)(["']?\s*[=:]\s*["']?)(?!<redacted>)[^\s"'&,;]+/gi,
    `$1$2${REDACTED}`
  ]
]

/** Masks known secret values and credential-looking fragments in a text. */
export const maskText = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  }
  for (const [pattern, replacement] of textRules) out = out.replace(pattern, replacement)
  return out
}

const MAX_DEPTH = 12

/** A JSON-safe copy of `value` with every secret rule applied. */
export const scrub = (value: unknown, secrets: ReadonlyArray<string>): unknown => {
  const seen = new WeakSet<object>()
  const go = (value: unknown, depth: number): unknown => {
    if (Redacted.isRedacted(value)) return REDACTED
    switch (typeof value) {
      case "string":
        return maskText(value, secrets)
      case "number":
        return Number.isFinite(value) ? value : String(value)
      case "boolean":
      case "undefined":
        return value
      case "bigint":
        return value.toString()
      case "symbol":
      case "function":
        return maskText(String(value), secrets)
    }
    if (value === null) return null
    const object = value as object
    if (depth >= MAX_DEPTH) return "[too deep]"
    if (seen.has(object)) return "[circular]"
    seen.add(object)
    try {
      if (Array.isArray(object)) return object.map((item) => go(item, depth + 1))
      if (object instanceof Date) return Number.isNaN(object.getTime()) ? "Invalid Date" : object.toISOString()
      if (object instanceof Error) {
        const fields: Record<string, unknown> = { ...(object as unknown as Record<string, unknown>) }
        return goRecord({ ...fields, name: object.name, message: object.message }, depth)
      }
      if (object instanceof Uint8Array) return `[${object.length} bytes]`
      const prototype = Object.getPrototypeOf(object)
      if (prototype !== Object.prototype && prototype !== null && Predicate.hasProperty(object, "toJSON")) {
        const json = Inspectable.toJSON(object)
        return json === object ? goRecord(object as Record<string, unknown>, depth) : go(json, depth + 1)
      }
      if (object instanceof Map) return goRecord(Object.fromEntries(object), depth)
      if (object instanceof Set) return [...object].map((item) => go(item, depth + 1))
      return goRecord(object as Record<string, unknown>, depth)
    } finally {
      seen.delete(object)
    }
  }
  const goRecord = (record: Record<string, unknown>, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(record)) {
      out[key] = isSecretKey(key) && item !== undefined && item !== null ? REDACTED : go(item, depth + 1)
    }
    return out
  }
  return go(value, 0)
}
