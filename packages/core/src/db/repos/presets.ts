/**
 * The `presets` table. Rows are decoded with their schema (branded ids, dates, the stored
 * template), so no caller casts. A template is written as the JSON the request admitted.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { PresetTemplate } from "../../presets/template.js"
import { NamespaceId, PresetId } from "../../schema/ids.js"
import { deleteWithPolicy } from "./bindings.js"

/**
 * A stored template as the response shows it: the admitted shape without re-running admission
 * (the same schema as `Preset.template`), so reading a row never re-judges what was admitted.
 */
const StoredTemplate = Schema.encodedSchema(PresetTemplate)

export const PresetRow = Schema.Struct({
  id: PresetId,
  namespace_id: NamespaceId,
  name: Schema.String,
  template: StoredTemplate,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type PresetRow = typeof PresetRow.Type

const PresetKey = Schema.Struct({ id: PresetId, namespace_id: NamespaceId })
const InsertPreset = Schema.Struct({ id: PresetId, namespace_id: NamespaceId, name: Schema.String, template: Schema.String })
const UpdatePreset = Schema.Struct({
  id: PresetId,
  namespace_id: NamespaceId,
  name: Schema.NullOr(Schema.String),
  template: Schema.NullOr(Schema.String)
})
const PresetPage = Schema.Struct({
  namespace_id: NamespaceId,
  after: Schema.optional(Schema.String),
  limit: Schema.Int
})

export class PresetsRepo extends Effect.Service<PresetsRepo>()("@svc/core/PresetsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal("id, namespace_id, name, template, created_at, updated_at")

    const insert = SqlSchema.single({
      Request: InsertPreset,
      Result: PresetRow,
      execute: (row) => sql`
        INSERT INTO presets (id, namespace_id, name, template)
        VALUES (${row.id}, ${row.namespace_id}, ${row.name}, ${row.template}::jsonb)
        RETURNING ${columns}
      `
    })

    /** A null field keeps the stored value. */
    const update = SqlSchema.findOne({
      Request: UpdatePreset,
      Result: PresetRow,
      execute: (row) => sql`
        UPDATE presets
        SET name = COALESCE(${row.name}, name),
          template = COALESCE(${row.template}::jsonb, template),
          updated_at = now()
        WHERE id = ${row.id} AND namespace_id = ${row.namespace_id}
        RETURNING ${columns}
      `
    })

    /** The Preset of a live Namespace (a deleted Namespace's Presets are gone with it). */
    const findLive = SqlSchema.findOne({
      Request: PresetKey,
      Result: PresetRow,
      execute: (key) => sql`
        SELECT p.id, p.namespace_id, p.name, p.template, p.created_at, p.updated_at
        FROM presets p JOIN namespaces n ON n.id = p.namespace_id
        WHERE p.id = ${key.id} AND p.namespace_id = ${key.namespace_id} AND n.status <> 'deleted'
      `
    })

    /**
     * The deleted Preset's name, for the audit record; none when there was no such Preset. Call
     * inside a transaction: the row is locked by a statement of its own first, so a binding
     * created on the Preset meanwhile (which locks it FOR KEY SHARE) has committed before the
     * deletion's snapshot is taken, and goes with the Preset instead of outliving it.
     */
    const remove = (key: typeof PresetKey.Type) =>
      Effect.zipRight(sql`SELECT 1 FROM presets WHERE id = ${key.id} AND namespace_id = ${key.namespace_id} FOR UPDATE`, removeLocked(key))

    const removeLocked = SqlSchema.findOne({
      Request: PresetKey,
      Result: Schema.Struct({ name: Schema.String }),
      execute: (key) =>
        deleteWithPolicy(sql, "preset", sql`DELETE FROM presets WHERE id = ${key.id} AND namespace_id = ${key.namespace_id} RETURNING id, namespace_id, name`)
    })

    /**
     * One keyset page of a Namespace's Presets, filtered by `visible` (the caller's `visibleTo`
     * fragment over `p.id` / `p.namespace_id`).
     */
    const page = (req: typeof PresetPage.Type, visible: Statement.Fragment): PageQuery<typeof PresetRow.Type> =>
      pageQuery(PresetRow, sql`
          SELECT p.id, p.namespace_id, p.name, p.template, p.created_at, p.updated_at
          FROM presets p
          WHERE p.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "p.id", req.after)}
            AND ${visible}
          ORDER BY p.id
          LIMIT ${req.limit}
        `)

    return {
      /** Fails with the SqlError a unique name (23505) gives, for the caller to map. */
      insert: (row: { readonly id: PresetId; readonly namespace_id: NamespaceId; readonly name: string; readonly template: PresetTemplate }) =>
        insert({ ...row, template: JSON.stringify(row.template) }).pipe(
          Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
        ),
      /** Fails with the SqlError a unique name (23505) gives, for the caller to map. */
      update: (row: {
        readonly id: PresetId
        readonly namespace_id: NamespaceId
        readonly name: string | undefined
        readonly template: PresetTemplate | undefined
      }) =>
        update({
          id: row.id,
          namespace_id: row.namespace_id,
          name: row.name ?? null,
          template: row.template === undefined ? null : JSON.stringify(row.template)
        }).pipe(Effect.catchTag("ParseError", Effect.die)),
      findLive: (key: typeof PresetKey.Type) => findLive(key).pipe(Effect.orDie),
      remove: (key: typeof PresetKey.Type) =>
        remove(key).pipe(Effect.map(Option.map((row) => row.name)), Effect.orDie),
      page
    }
  })
}) {}
