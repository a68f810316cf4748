/**
 * The `builtin` Secret Driver: AES-256-GCM (node:crypto) under the key of `SVC_SECRET_KEY`, a
 * fresh random 12-byte nonce per value, the 16-byte tag, and the key id stored beside the
 * ciphertext. The key id is the first 8 bytes of SHA-256 of the key, hex: rotating the key
 * means configuring the new key as current and the old ones as `previous` until re-sealed.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { Effect, Layer, Redacted } from "effect"
import { type SealedSecret, SecretDecryptionFailed, SecretDriver, type SecretDriverShape, UnknownSecretKey } from "./driver.js"

const ALGORITHM = "aes-256-gcm"
const NONCE_BYTES = 12
const TAG_BYTES = 16

/** The id stored beside every value sealed with `key`: first 8 bytes of its SHA-256, hex. */
export const secretKeyId = (key: Uint8Array): string => createHash("sha256").update(key).digest().subarray(0, 8).toString("hex")

export interface BuiltinSecretKeys {
  /** Seals every new value. */
  readonly current: Redacted.Redacted<Uint8Array>
  /** Older keys still able to reveal what they sealed. */
  readonly previous?: ReadonlyArray<Redacted.Redacted<Uint8Array>>
}

export const makeBuiltinSecretDriver = (keys: BuiltinSecretKeys): SecretDriverShape => {
  const byId = new Map<string, Buffer>()
  for (const redacted of [keys.current, ...(keys.previous ?? [])]) {
    const key = Buffer.from(Redacted.value(redacted))
    if (key.length !== 32) throw new Error("A builtin secret key must be exactly 32 bytes.")
    if (!byId.has(secretKeyId(key))) byId.set(secretKeyId(key), key)
  }
  const currentKey = Buffer.from(Redacted.value(keys.current))
  const currentId = secretKeyId(currentKey)

  const seal = (value: Redacted.Redacted<string>) =>
    Effect.sync((): SealedSecret => {
      const nonce = randomBytes(NONCE_BYTES)
      const cipher = createCipheriv(ALGORITHM, currentKey, nonce, { authTagLength: TAG_BYTES })
      cipher.setAAD(Buffer.from(currentId, "utf8"))
      const ciphertext = Buffer.concat([cipher.update(Redacted.value(value), "utf8"), cipher.final()])
      return { keyId: currentId, nonce, ciphertext, tag: cipher.getAuthTag() }
    })

  const reveal = (sealed: SealedSecret) =>
    Effect.suspend((): Effect.Effect<Redacted.Redacted<string>, UnknownSecretKey | SecretDecryptionFailed> => {
      const key = byId.get(sealed.keyId)
      if (key === undefined) return Effect.fail(new UnknownSecretKey({ keyId: sealed.keyId }))
      if (sealed.nonce.length !== NONCE_BYTES || sealed.tag.length !== TAG_BYTES) {
        return Effect.fail(new SecretDecryptionFailed({ keyId: sealed.keyId }))
      }
      try {
        const decipher = createDecipheriv(ALGORITHM, key, sealed.nonce, { authTagLength: TAG_BYTES })
        decipher.setAAD(Buffer.from(sealed.keyId, "utf8"))
        decipher.setAuthTag(sealed.tag)
        const plaintext = Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8")
        return Effect.succeed(Redacted.make(plaintext))
      } catch {
        return Effect.fail(new SecretDecryptionFailed({ keyId: sealed.keyId }))
      }
    })

  return { name: "builtin", seal, reveal }
}

/** The builtin driver over the given keys. */
export const builtinSecretDriverLayer = (keys: BuiltinSecretKeys): Layer.Layer<SecretDriver> =>
  Layer.sync(SecretDriver, () => makeBuiltinSecretDriver(keys))
