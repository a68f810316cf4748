/**
 * Request and response bodies of the Secrets API (DESIGN §7). The value is write-only: it is
 * accepted on create and update and never part of any response.
 */
import { detailMessage, LONE_SURROGATE, NamespaceId, RequestBody, SecretId, SecretRef, Timestamp } from "../../schema/index.js"
import { Schema } from "effect"
import { ResourceName } from "../iam/schemas.js"

export const MAX_SECRET_VALUE_BYTES = 65536

// TextEncoder, not Buffer: this contract is also run by the browser console (DESIGN §16).
const utf8Bytes = (s: string) => new TextEncoder().encode(s).length

/** 1-65536 bytes of UTF-8 (no lone surrogates), no NUL. Error messages never echo the value. */
export const SecretValue = Schema.String.pipe(
  Schema.filter((s) => s.length >= 1, { message: detailMessage("INVALID_VALUE", "must not be empty") }),
  Schema.filter((s) => utf8Bytes(s) <= MAX_SECRET_VALUE_BYTES, {
    message: detailMessage("TOO_LONG", `must be at most ${MAX_SECRET_VALUE_BYTES} bytes of UTF-8`)
  }),
  Schema.filter((s) => !s.includes("\u0000") && !LONE_SURROGATE.test(s), {
    message: detailMessage("INVALID_FORMAT", "must be UTF-8 text without NUL")
  })
).annotations({ description: "The secret value, 1-65536 bytes of UTF-8 without NUL; write-only", writeOnly: true })

export const CreateSecret = RequestBody({ name: ResourceName, value: SecretValue })
  .annotations({ identifier: "CreateSecretRequest" })

export const UpdateSecret = RequestBody({ value: SecretValue }).annotations({ identifier: "UpdateSecretRequest" })

export const Secret = Schema.Struct({
  id: SecretId,
  namespaceId: NamespaceId,
  name: Schema.String,
  /** How other resources (Presets, Agent configuration) name this Secret. */
  ref: SecretRef,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "Secret" })
export type Secret = typeof Secret.Type
