/**
 * The Secret Driver (DESIGN §7): seals a Secret's value for storage and reveals it again. The
 * API only ever seals (values are write-only); `reveal` exists for deployments.
 */
import { Context, Data, type Effect, type Redacted } from "effect"

/** What the store keeps beside a Secret: never the plaintext. */
export interface SealedSecret {
  /** Which key sealed the value (so the key can be rotated); hex. */
  readonly keyId: string
  /** 12 random bytes, fresh for every sealed value. */
  readonly nonce: Uint8Array
  readonly ciphertext: Uint8Array
  /** The 16-byte AES-GCM authentication tag. */
  readonly tag: Uint8Array
}

/** The sealed value names a key this driver does not hold. */
export class UnknownSecretKey extends Data.TaggedError("UnknownSecretKey")<{ readonly keyId: string }> {
  override get message() {
    return `The secret was sealed with key ${this.keyId}, which is not configured.`
  }
}

/** The sealed value does not authenticate (tampered with, or truncated). Carries no value. */
export class SecretDecryptionFailed extends Data.TaggedError("SecretDecryptionFailed")<{ readonly keyId: string }> {
  override get message() {
    return `The secret sealed with key ${this.keyId} does not authenticate.`
  }
}

export interface SecretDriverShape {
  /** The driver's name, e.g. `builtin`. */
  readonly name: string
  readonly seal: (value: Redacted.Redacted<string>) => Effect.Effect<SealedSecret>
  readonly reveal: (
    sealed: SealedSecret
  ) => Effect.Effect<Redacted.Redacted<string>, UnknownSecretKey | SecretDecryptionFailed>
}

export class SecretDriver extends Context.Tag("@svc/core/drivers/secret/SecretDriver")<SecretDriver, SecretDriverShape>() {}
