/**
 * The `service_keys` table (SPEC 5.5): only the SHA-256 digest of a key is stored. Its queries
 * keep their `SqlError`: the service-keys service answers a database failure with its own 503
 * message, and bootstrap reports it as a database failure of its own.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { NamespaceId, ServiceKeyId, ServicePrincipalId } from "../../schema/ids.js"

const InsertServiceKey = Schema.Struct({
  id: ServiceKeyId,
  service_principal_id: ServicePrincipalId,
  namespace_id: Schema.NullOr(NamespaceId),
  name: Schema.String,
  digest: Schema.Uint8ArrayFromSelf,
  expires_in_seconds: Schema.Number,
  /** The administrator who issued it; null for bootstrap. */
  issued_by: Schema.NullOr(Schema.String)
})

export const ActiveServiceKeyRow = Schema.Struct({
  id: ServiceKeyId,
  service_principal_id: ServicePrincipalId,
  namespace_id: Schema.NullOr(NamespaceId)
})
export type ActiveServiceKeyRow = typeof ActiveServiceKeyRow.Type

export class ServiceKeysRepo extends Effect.Service<ServiceKeysRepo>()("@svc/core/ServiceKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * Expiry is counted from the database clock, the same clock every API process checks it
     * against. Returns the expiry.
     */
    const insert = SqlSchema.single({
      Request: InsertServiceKey,
      Result: Schema.Struct({ expires_at: Schema.DateFromSelf }),
      execute: (row) => sql`
        INSERT INTO service_keys (id, service_principal_id, namespace_id, name, digest, expires_at, issued_by)
        VALUES (
          ${row.id}, ${row.service_principal_id}, ${row.namespace_id}, ${row.name}, ${row.digest},
          date_trunc('milliseconds', now()) + make_interval(secs => ${row.expires_in_seconds}), ${row.issued_by}
        )
        RETURNING expires_at
      `
    })

    /** Best-effort removal of a key whose issuance could not be completed. */
    const remove = SqlSchema.void({
      Request: ServiceKeyId,
      execute: (id) => sql`DELETE FROM service_keys WHERE id = ${id}`
    })

    /** A key that is not revoked (expired keys included: they can still be revoked). */
    const findActive = SqlSchema.findOne({
      Request: Schema.String,
      Result: ActiveServiceKeyRow,
      execute: (id) => sql`
        SELECT id, service_principal_id, namespace_id FROM service_keys WHERE id = ${id} AND revoked_at IS NULL
      `
    })

    /** Revokes a key that is not revoked yet; None when another revocation came first. */
    const revoke = SqlSchema.findOne({
      Request: ServiceKeyId,
      Result: Schema.Struct({ id: ServiceKeyId }),
      execute: (id) => sql`
        UPDATE service_keys SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL RETURNING id
      `
    })

    return {
      insert: (row: typeof InsertServiceKey.Type) =>
        insert(row).pipe(Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })),
      remove: (id: ServiceKeyId) => remove(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      findActive: (id: string) => findActive(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      revoke: (id: ServiceKeyId) => revoke(id).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}
