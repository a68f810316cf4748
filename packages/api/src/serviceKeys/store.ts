import { digestOf, newToken } from "@svc/core/iam"

/**
 * A new service key: the plaintext, returned once and never stored, logged or audited, and the
 * SHA-256 digest that `ServiceKeysRepo.insert` stores in its place.
 */
export const newServiceKey = (): { readonly key: string; readonly digest: Buffer } => {
  const key = newToken("svck")
  return { key, digest: digestOf(key) }
}
