/**
 * The Secret values a source is registered with, read and revealed only to hand them to the
 * Credential Gateway in the same request. The Secrets are locked FOR KEY SHARE for the caller's
 * transaction, so none is deleted before the source's references to it commit.
 */
import { SecretsRepo } from "@svc/core/db"
import { SecretDriver } from "@svc/core/drivers/secret"
import { DependencyUnavailable, NotFound } from "@svc/core/errors"
import type { NamespaceId, SecretId } from "@svc/core/schema"
import { Effect, Redacted } from "effect"

export const revealSourceSecrets = (namespaceId: NamespaceId, fields: ReadonlyArray<readonly [string, SecretId]>) =>
  Effect.gen(function* () {
    if (fields.length === 0) return {}
    const repo = yield* SecretsRepo
    const driver = yield* SecretDriver
    const ids = [...new Set(fields.map(([, id]) => id))] as [SecretId, ...Array<SecretId>]
    const present = yield* repo.lockPresent({ namespace_id: namespaceId, ids })
    if (ids.some((id) => !present.has(id))) return yield* new NotFound({ message: "A referenced Secret does not exist in this Namespace." })
    const rows = yield* repo.sealed({ namespace_id: namespaceId, ids }).pipe(Effect.orDie)
    const values = new Map<string, string>()
    for (const row of rows) {
      const value = yield* driver.reveal({ keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag }).pipe(
        Effect.mapError(() => new DependencyUnavailable({ message: "The Secret Driver cannot read a referenced Secret's value." }))
      )
      values.set(row.id, Redacted.value(value))
    }
    return Object.fromEntries(fields.map(([field, id]) => [field, values.get(id) ?? ""]))
  })
