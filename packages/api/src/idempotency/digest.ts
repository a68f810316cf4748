/**
 * The digest that tells a repeat from another request under the same key. Bodies may carry a
 * Secret value or a password (Secret and account creation), so the digest is a slow, salted
 * hash (scrypt, salted with the principal and key), never a plain hash someone could test
 * guesses against cheaply.
 */
import { scrypt } from "node:crypto"
import { Effect } from "effect"

/** JSON with object keys sorted, so key order and whitespace do not change the digest. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/** The canonical form of a request body: empty for none, canonical JSON, else the text as sent. */
export const canonicalBody = (text: string): string => {
  if (text.length === 0) return ""
  try {
    return canonical(JSON.parse(text))
  } catch {
    return `raw:${text}`
  }
}

/** scrypt with its default cost (N = 16384, r = 8, p = 1), 32 bytes, hex. */
export const bodyDigest = (principalId: string, key: string, text: string): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    scrypt(canonicalBody(text), `svc-idempotency:${principalId}:${key}`, 32, (error, derived) => {
      resume(error === null ? Effect.succeed(derived.toString("hex")) : Effect.die(error))
    })
  })
