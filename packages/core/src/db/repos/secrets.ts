/**
 * The `secrets` table. Rows are decoded with their schema (branded ids, dates), so no caller
 * casts; the sealed value's columns are written here and read only by the Secret Driver's
 * reveal path, never returned by these queries.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { NamespaceId, SecretId } from "../../schema/ids.js"
import { pendingProvisioningReferrer } from "./agentProvisioning.js"
import { deleteWithPolicy } from "./bindings.js"

export const SecretRow = Schema.Struct({
  id: SecretId,
  namespace_id: NamespaceId,
  name: Schema.String,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type SecretRow = typeof SecretRow.Type

/** The ciphertext of a value as the Secret Driver sealed it. */
export const SealedColumns = Schema.Struct({
  driver: Schema.String,
  key_id: Schema.String,
  nonce: Schema.Uint8ArrayFromSelf,
  ciphertext: Schema.Uint8ArrayFromSelf,
  tag: Schema.Uint8ArrayFromSelf
})

const InsertSecret = Schema.Struct({ id: SecretId, namespace_id: NamespaceId, name: Schema.String, ...SealedColumns.fields })
const UpdateSecretValue = Schema.Struct({ id: SecretId, namespace_id: NamespaceId, ...SealedColumns.fields })
const SecretKey = Schema.Struct({ id: SecretId, namespace_id: NamespaceId })
const SecretIds = Schema.Struct({ namespace_id: NamespaceId, ids: Schema.NonEmptyArray(SecretId) })
const SealedOf = Schema.Struct({ namespace_id: NamespaceId, ids: Schema.Array(Schema.String) })
const SealedRow = Schema.Struct({
  id: SecretId,
  key_id: Schema.String,
  nonce: Schema.Uint8ArrayFromSelf,
  ciphertext: Schema.Uint8ArrayFromSelf,
  tag: Schema.Uint8ArrayFromSelf
})
const SecretPage = Schema.Struct({
  namespace_id: NamespaceId,
  after: Schema.optional(Schema.String),
  limit: Schema.Int
})

export class SecretsRepo extends Effect.Service<SecretsRepo>()("@svc/core/SecretsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal("id, namespace_id, name, created_at, updated_at")

    /** Fails with the SqlError a unique name (23505) gives, for the caller to map. */
    const insert = SqlSchema.single({
      Request: InsertSecret,
      Result: SecretRow,
      execute: (row) => sql`
        INSERT INTO secrets (id, namespace_id, name, driver, key_id, nonce, ciphertext, tag)
        VALUES (${row.id}, ${row.namespace_id}, ${row.name}, ${row.driver}, ${row.key_id},
          ${row.nonce}, ${row.ciphertext}, ${row.tag})
        RETURNING ${columns}
      `
    })

    const updateValue = SqlSchema.findOne({
      Request: UpdateSecretValue,
      Result: SecretRow,
      execute: (row) => sql`
        UPDATE secrets
        SET driver = ${row.driver}, key_id = ${row.key_id}, nonce = ${row.nonce},
          ciphertext = ${row.ciphertext}, tag = ${row.tag}, updated_at = now()
        WHERE id = ${row.id} AND namespace_id = ${row.namespace_id}
        RETURNING ${columns}
      `
    })

    /** The Secret of a live Namespace (a deleted Namespace's Secrets are gone with it). */
    const findLive = SqlSchema.findOne({
      Request: SecretKey,
      Result: SecretRow,
      execute: (key) => sql`
        SELECT s.id, s.namespace_id, s.name, s.created_at, s.updated_at
        FROM secrets s JOIN namespaces n ON n.id = s.namespace_id
        WHERE s.id = ${key.id} AND s.namespace_id = ${key.namespace_id} AND n.status <> 'deleted'
      `
    })

    /** Locks the row against a referrer being written concurrently (DELETE's 409 check). */
    const lockForDelete = SqlSchema.findOne({
      Request: SecretKey,
      Result: SecretRow,
      execute: (key) => sql`
        SELECT ${columns} FROM secrets WHERE id = ${key.id} AND namespace_id = ${key.namespace_id} FOR UPDATE
      `
    })

    /**
     * Which of `ids` are Secrets of the Namespace, locked FOR KEY SHARE for the rest of the
     * caller's transaction: a concurrent delete of one waits, so a reference written next to
     * this check cannot point at a Secret that is gone.
     */
    const lockPresent = SqlSchema.findAll({
      Request: SecretIds,
      Result: Schema.Struct({ id: SecretId }),
      execute: (req) => sql`
        SELECT id FROM secrets WHERE namespace_id = ${req.namespace_id} AND id IN ${sql.in(req.ids)} FOR KEY SHARE
      `
    })

    const remove = SqlSchema.void({
      Request: SecretId,
      execute: (id) => deleteWithPolicy(sql, "secret", sql`DELETE FROM secrets WHERE id = ${id} RETURNING id, namespace_id`)
    })

    /**
     * One keyset page of a Namespace's Secrets, filtered by `visible` (the caller's
     * `visibleTo` fragment over `s.id` / `s.namespace_id`).
     */
    const page = (req: typeof SecretPage.Type, visible: Statement.Fragment): PageQuery<typeof SecretRow.Type> =>
      pageQuery(SecretRow, sql`
          SELECT s.id, s.namespace_id, s.name, s.created_at, s.updated_at
          FROM secrets s
          WHERE s.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "s.id", req.after)}
            AND ${visible}
          ORDER BY s.id
          LIMIT ${req.limit}
        `)

    /**
     * What still references the Secret, or undefined when nothing does. Each referrer is also
     * guarded by a foreign key: Configurations' `secretBindings`, Agents' `harnessAuth` drafts
     * and revisions (which deliver the Secret whenever their gateway starts), service accounts,
     * credential sources, and Agent provisioning that names it and still needs it: its
     * Configuration's bindings until the Configuration is written (its references then take
     * over), its harness Secret until the Agent is (`pendingProvisioningReferrer`, the rule
     * Configurations follow). Presets are not referrers: their references are checked when a
     * Preset is applied.
     */
    const referrer = (key: typeof SecretKey.Type) =>
      SqlSchema.findOne({
        Request: SecretKey,
        Result: Schema.Struct({ referrer: Schema.String }),
        execute: (k) => sql`
          SELECT 'Configuration ' || r.configuration_id AS referrer FROM configuration_secret_refs r
            JOIN configurations c ON c.id = r.configuration_id
            WHERE r.secret_id = ${k.id} AND c.namespace_id = ${k.namespace_id}
          UNION ALL
          SELECT 'Agent ' || r.agent_id FROM agent_secret_refs r JOIN agents a ON a.id = r.agent_id
            WHERE r.secret_id = ${k.id} AND a.namespace_id = ${k.namespace_id}
          UNION ALL
          SELECT 'revision ' || r.revision_id FROM agent_revision_secret_refs r JOIN agent_revisions v ON v.id = r.revision_id
            WHERE r.secret_id = ${k.id} AND v.namespace_id = ${k.namespace_id}
          UNION ALL
          SELECT 'service account ' || sa.id FROM service_accounts sa
            WHERE sa.credential_secret_id = ${k.id} AND sa.namespace_id = ${k.namespace_id}
          UNION ALL
          SELECT 'credential source ' || r.source_id FROM credential_source_secret_refs r
            WHERE r.secret_id = ${k.id}
          UNION ALL
          ${pendingProvisioningReferrer(sql, k.namespace_id, sql`(p.request -> 'agent' ->> 'harnessSecretId' = ${k.id}
            OR (p.configuration_id IS NULL AND EXISTS (
              SELECT 1 FROM jsonb_each(p.request -> 'configuration' -> 'secretBindings') b
              WHERE b.value -> 'source' ->> 'id' = ${k.id})))`)}
          LIMIT 1
        `
      })(key).pipe(Effect.map((row) => (row._tag === "Some" ? row.value.referrer : undefined)), Effect.orDie)

    /**
     * The sealed values of a Namespace's Secrets, for the worker to reveal just before a gateway
     * starts (never returned by the API). Keeps the SqlError: the worker retries on it.
     */
    const sealed = (request: typeof SealedOf.Type) =>
      SqlSchema.findAll({
        Request: SealedOf,
        Result: SealedRow,
        execute: (req) => sql`
          SELECT id, key_id, nonce, ciphertext, tag FROM secrets
          WHERE namespace_id = ${req.namespace_id} AND id IN ${sql.in(req.ids)}
        `
      })(request).pipe(Effect.catchTag("ParseError", Effect.die))

    return {
      insert,
      sealed,
      updateValue: (row: typeof UpdateSecretValue.Type) => updateValue(row).pipe(Effect.orDie),
      findLive: (key: typeof SecretKey.Type) => findLive(key).pipe(Effect.orDie),
      lockForDelete: (key: typeof SecretKey.Type) => lockForDelete(key).pipe(Effect.orDie),
      remove: (id: SecretId) => remove(id).pipe(Effect.orDie),
      lockPresent: (req: typeof SecretIds.Type) =>
        lockPresent(req).pipe(Effect.map((rows) => new Set<SecretId>(rows.map((row) => row.id))), Effect.orDie),
      page,
      referrer
    }
  })
}) {}
