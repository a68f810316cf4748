import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { digestOf, newToken } from "@svc/core/iam"
import type { ServiceKeyId } from "@svc/core/schema"
import { Effect } from "effect"

export interface NewServiceKey {
  readonly id: ServiceKeyId
  readonly servicePrincipalId: string
  readonly namespaceId: string | null
  readonly name: string
  readonly expiresInSeconds: number
  /** The administrator who issued it; null for bootstrap. */
  readonly issuedBy: string | null
}

export interface StoredServiceKey {
  readonly id: ServiceKeyId
  /** The plaintext: returned once, never stored, logged or audited. */
  readonly key: string
  readonly expiresAt: Date
}

/**
 * Stores a new key with the ambient SqlClient (joins the caller's transaction): only the SHA-256
 * digest of the plaintext is kept. Expiry is counted from the database clock, the same clock
 * every API process checks it against.
 */
export const insertServiceKey = (input: NewServiceKey): Effect.Effect<StoredServiceKey, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = input.id
    const key = newToken("svck")
    const rows = yield* sql<{ expires_at: Date }>`
      INSERT INTO service_keys (id, service_principal_id, namespace_id, name, digest, expires_at, issued_by)
      VALUES (
        ${id}, ${input.servicePrincipalId}, ${input.namespaceId}, ${input.name}, ${digestOf(key)},
        date_trunc('milliseconds', now()) + make_interval(secs => ${input.expiresInSeconds}), ${input.issuedBy}
      )
      RETURNING expires_at
    `
    return { id, key, expiresAt: rows[0]!.expires_at }
  }).pipe(Effect.withSpan("ServiceKeys.insert"))

/** Best-effort removal of a key whose issuance could not be completed. */
export const removeServiceKey = (id: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM service_keys WHERE id = ${id}`
  }).pipe(Effect.withSpan("ServiceKeys.remove"))
