/**
 * The `configurations` table and its `configuration_secret_refs` (the foreign keys that keep a
 * bound Secret from being deleted). Rows are decoded with their schema (branded ids, dates,
 * `generation` as a number), so no caller casts. The JSON documents are written exactly as the
 * caller admitted them.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { SecretBinding } from "../../api/configurations/schemas.js"
import { ConfigurationId, NamespaceId, SecretId } from "../../schema/ids.js"
import { JsonValue } from "../../schema/json.js"
import { pendingProvisioningReferrer } from "./agentProvisioning.js"
import { deleteWithPolicy } from "./bindings.js"

export const ConfigurationRow = Schema.Struct({
  id: ConfigurationId,
  namespace_id: NamespaceId,
  kind: Schema.Literal("agent"),
  // bigint arrives as a string; the column's CHECK keeps it within 2^53 - 1.
  generation: Schema.NumberFromString,
  values: Schema.Record({ key: Schema.String, value: JsonValue }),
  secret_bindings: Schema.Record({ key: Schema.String, value: SecretBinding }),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ConfigurationRow = typeof ConfigurationRow.Type

const ConfigurationKey = Schema.Struct({ id: ConfigurationId, namespace_id: NamespaceId })
/** The documents as the caller admitted them, serialized as they are. */
const Documents = { values: Schema.parseJson(), secret_bindings: Schema.parseJson() }
const InsertConfiguration = Schema.Struct({ id: ConfigurationId, namespace_id: NamespaceId, ...Documents })
const UpdateConfiguration = Schema.Struct({ id: ConfigurationId, ...Documents })
const SecretRefs = Schema.Struct({ configuration_id: ConfigurationId, secret_ids: Schema.Array(SecretId) })
const ConfigurationPage = Schema.Struct({
  namespace_id: NamespaceId,
  after: Schema.optional(Schema.String),
  limit: Schema.Int
})

export class ConfigurationsRepo extends Effect.Service<ConfigurationsRepo>()("@svc/core/ConfigurationsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(`c.id, c.namespace_id, c.kind, c.generation, c."values", c.secret_bindings, c.created_at, c.updated_at`)

    /** A Configuration of kind `agent` at generation 1 (its Secret references are written apart). */
    const insert = SqlSchema.void({
      Request: InsertConfiguration,
      execute: (row) => sql`
        INSERT INTO configurations (id, namespace_id, kind, generation, "values", secret_bindings)
        VALUES (${row.id}, ${row.namespace_id}, 'agent', 1, ${row.values}::jsonb, ${row.secret_bindings}::jsonb)
      `
    })

    /** Replaces the documents and adds one to `generation`. */
    const update = SqlSchema.single({
      Request: UpdateConfiguration,
      Result: ConfigurationRow,
      execute: (row) => sql`
        UPDATE configurations AS c
        SET "values" = ${row.values}::jsonb, secret_bindings = ${row.secret_bindings}::jsonb,
          generation = c.generation + 1, updated_at = now()
        WHERE c.id = ${row.id}
        RETURNING ${columns}
      `
    })

    /**
     * Replaces the `configuration_secret_refs` rows. Fails with the SqlError of a foreign key
     * (23503) when a Secret is gone, for the caller to map.
     */
    const replaceSecretRefs = SqlSchema.void({
      Request: SecretRefs,
      execute: (refs) =>
        Effect.zipRight(
          sql`DELETE FROM configuration_secret_refs WHERE configuration_id = ${refs.configuration_id}`,
          refs.secret_ids.length === 0
            ? Effect.succeed([])
            : sql`
              INSERT INTO configuration_secret_refs ${sql.insert(refs.secret_ids.map((secretId) => ({ configuration_id: refs.configuration_id, secret_id: secretId })))}
            `
        )
    })

    /** The Configuration of a live Namespace; `lock` takes its row FOR UPDATE. */
    const findLive = (key: typeof ConfigurationKey.Type, lock: boolean) =>
      SqlSchema.findOne({
        Request: ConfigurationKey,
        Result: ConfigurationRow,
        execute: (k) => sql`
          SELECT ${columns}
          FROM configurations c JOIN namespaces n ON n.id = c.namespace_id
          WHERE c.id = ${k.id} AND c.namespace_id = ${k.namespace_id} AND n.status <> 'deleted'
          ${lock ? sql`FOR UPDATE OF c` : sql``}
        `
      })(key).pipe(Effect.orDie)

    const remove = SqlSchema.void({
      Request: ConfigurationId,
      execute: (id) => deleteWithPolicy(sql, "configuration", sql`DELETE FROM configurations WHERE id = ${id} RETURNING id, namespace_id`)
    })

    /**
     * One keyset page of a Namespace's Configurations, filtered by `visible` (the caller's
     * `visibleTo` fragment over `c.id` / `c.namespace_id`).
     */
    const page = (req: typeof ConfigurationPage.Type, visible: Statement.Fragment): PageQuery<typeof ConfigurationRow.Type> =>
      pageQuery(ConfigurationRow, sql`
          SELECT ${columns}
          FROM configurations c
          WHERE c.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "c.id", req.after)}
            AND ${visible}
          ORDER BY c.id
          LIMIT ${req.limit}
        `)

    /**
     * What still references the Configuration, or undefined (DELETE answers 409 while something
     * does): an Agent's draft, a revision (a revision snapshots the Configuration it ran and
     * keeps naming it), or provisioning that created it and has yet to create its Agent while
     * that work is queued or running (failed work only ends; a retry then finds it gone). Run it
     * inside the deleting transaction after the row lock: the Agent insert's foreign key waits
     * for it.
     */
    const referrer = (key: typeof ConfigurationKey.Type) =>
      SqlSchema.findOne({
        Request: ConfigurationKey,
        Result: Schema.Struct({ referrer: Schema.String }),
        execute: (k) => sql`
          SELECT 'Agent ' || id AS referrer FROM agents WHERE configuration_id = ${k.id} AND namespace_id = ${k.namespace_id}
          UNION ALL
          SELECT 'revision ' || id FROM agent_revisions WHERE configuration_id = ${k.id} AND namespace_id = ${k.namespace_id}
          UNION ALL
          ${pendingProvisioningReferrer(sql, k.namespace_id, sql`p.configuration_id = ${k.id}`)}
          LIMIT 1
        `
      })(key).pipe(Effect.map(Option.match({ onNone: () => undefined, onSome: (row) => row.referrer })), Effect.orDie)

    return {
      insert: (row: typeof InsertConfiguration.Type) => insert(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      update: (row: typeof UpdateConfiguration.Type) =>
        update(row).pipe(Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })),
      /** Fails with the SqlError of a foreign key (23503) when a Secret is gone. */
      replaceSecretRefs: (refs: typeof SecretRefs.Type) => replaceSecretRefs(refs).pipe(Effect.catchTag("ParseError", Effect.die)),
      findLive: (key: typeof ConfigurationKey.Type) => findLive(key, false),
      /** Call inside the writing transaction. */
      lockLive: (key: typeof ConfigurationKey.Type) => findLive(key, true),
      remove: (id: ConfigurationId) => remove(id).pipe(Effect.orDie),
      page,
      referrer
    }
  })
}) {}
