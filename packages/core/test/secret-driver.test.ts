import { describe, expect, it } from "@effect/vitest"
import { makeBuiltinSecretDriver, secretKeyId } from "@svc/core/drivers/secret"
import { createHash, randomBytes } from "node:crypto"
import { Effect, Either, Redacted } from "effect"

const key = () => Redacted.make(new Uint8Array(randomBytes(32)))
const PLAINTEXT = "hunter2-sécret-値"

const flip = (bytes: Uint8Array, index = 0) => {
  const copy = new Uint8Array(bytes)
  copy[index] = copy[index]! ^ 0x01
  return copy
}

describe("builtin Secret Driver", () => {
  it.effect("seals with AES-256-GCM: a 12-byte nonce fresh per value, a 16-byte tag, the key id; reveals the value", () =>
    Effect.gen(function* () {
      const k = key()
      const driver = makeBuiltinSecretDriver({ current: k })
      expect(driver.name).toBe("builtin")
      const a = yield* driver.seal(Redacted.make(PLAINTEXT))
      const b = yield* driver.seal(Redacted.make(PLAINTEXT))
      const expectedId = createHash("sha256").update(Redacted.value(k)).digest().subarray(0, 8).toString("hex")
      expect(a.keyId).toBe(expectedId)
      expect(secretKeyId(Redacted.value(k))).toBe(expectedId)
      expect(a.keyId).toMatch(/^[0-9a-f]{16}$/)
      expect(a.nonce).toHaveLength(12)
      expect(a.tag).toHaveLength(16)
      expect(Buffer.from(a.nonce).equals(Buffer.from(b.nonce))).toBe(false)
      expect(Buffer.from(a.ciphertext).equals(Buffer.from(b.ciphertext))).toBe(false)
      expect(Buffer.from(a.ciphertext).includes(Buffer.from(PLAINTEXT, "utf8"))).toBe(false)
      expect(Redacted.value(yield* driver.reveal(a))).toBe(PLAINTEXT)
      expect(Redacted.value(yield* driver.reveal(b))).toBe(PLAINTEXT)
    }))

  it.effect("a tampered ciphertext, tag, nonce or key id does not authenticate; errors carry no value", () =>
    Effect.gen(function* () {
      const driver = makeBuiltinSecretDriver({ current: key() })
      const sealed = yield* driver.seal(Redacted.make(PLAINTEXT))
      const cases = [
        { ...sealed, ciphertext: flip(sealed.ciphertext) },
        { ...sealed, ciphertext: sealed.ciphertext.subarray(1) },
        { ...sealed, tag: flip(sealed.tag, 15) },
        { ...sealed, tag: sealed.tag.subarray(0, 12) },
        { ...sealed, nonce: flip(sealed.nonce, 11) }
      ]
      for (const tampered of cases) {
        const result = yield* Effect.either(driver.reveal(tampered))
        expect(Either.isLeft(result) && result.left._tag).toBe("SecretDecryptionFailed")
        if (Either.isLeft(result)) expect(JSON.stringify(result.left) + result.left.message).not.toContain("hunter2")
      }
    }))

  it.effect("refuses unknown key ids; a rotated driver still reveals what the previous key sealed", () =>
    Effect.gen(function* () {
      const oldKey = key()
      const newKey = key()
      const before = makeBuiltinSecretDriver({ current: oldKey })
      const sealed = yield* before.seal(Redacted.make(PLAINTEXT))
      const stranger = makeBuiltinSecretDriver({ current: newKey })
      const refused = yield* Effect.either(stranger.reveal(sealed))
      expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "UnknownSecretKey", keyId: sealed.keyId })
      // A forged key id naming the current key fails authentication (the key id is authenticated data).
      const forged = yield* Effect.either(stranger.reveal({ ...sealed, keyId: secretKeyId(Redacted.value(newKey)) }))
      expect(Either.isLeft(forged) && forged.left._tag).toBe("SecretDecryptionFailed")
      const rotated = makeBuiltinSecretDriver({ current: newKey, previous: [oldKey] })
      expect(Redacted.value(yield* rotated.reveal(sealed))).toBe(PLAINTEXT)
      const resealed = yield* rotated.seal(Redacted.make(PLAINTEXT))
      expect(resealed.keyId).toBe(secretKeyId(Redacted.value(newKey)))
      expect(() => makeBuiltinSecretDriver({ current: Redacted.make(new Uint8Array(16)) })).toThrow(/32 bytes/)
    }))
})
