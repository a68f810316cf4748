/**
 * The `credential_sources` table and the Secrets each source was registered from. Rows are
 * decoded with their schema; a source's Secret references are aggregated into the row, field
 * name to Secret id (never a value: values live only in `secrets`, sealed).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { CredentialSourceId, NamespaceId, SecretId } from "../../schema/ids.js"
import { deleteWithPolicy } from "./bindings.js"
import { harnessReferrer } from "./harnessReferrer.js"

export const CredentialSourceState = Schema.Literal("registering", "ready", "deleting")
export type CredentialSourceState = typeof CredentialSourceState.Type

export const CredentialSourceRow = Schema.Struct({
  id: CredentialSourceId,
  namespace_id: NamespaceId,
  name: Schema.String,
  type: Schema.String,
  config: Schema.Record({ key: Schema.String, value: Schema.String }),
  secrets: Schema.Record({ key: Schema.String, value: SecretId }),
  state: CredentialSourceState,
  created_at: Schema.DateFromSelf
})
export type CredentialSourceRow = typeof CredentialSourceRow.Type

const Key = Schema.Struct({ id: CredentialSourceId, namespace_id: NamespaceId })
const Insert = Schema.Struct({
  id: CredentialSourceId,
  namespace_id: NamespaceId,
  name: Schema.String,
  type: Schema.String,
  config: Schema.String,
  fields: Schema.Array(Schema.String),
  secret_ids: Schema.Array(Schema.String)
})
const Transition = Schema.Struct({ id: CredentialSourceId, from: Schema.Array(CredentialSourceState), to: CredentialSourceState })
const Page = Schema.Struct({ namespace_id: NamespaceId, after: Schema.optional(Schema.String), limit: Schema.Int })
const Unsettled = Schema.Struct({ id: CredentialSourceId, namespace_id: NamespaceId })

export class CredentialSourcesRepo extends Effect.Service<CredentialSourcesRepo>()("@svc/core/CredentialSourcesRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const select = sql.literal(`
      SELECT c.id, c.namespace_id, c.name, c.type, c.config, c.state, c.created_at,
        COALESCE((SELECT jsonb_object_agg(r.field, r.secret_id) FROM credential_source_secret_refs r WHERE r.source_id = c.id),
          '{}'::jsonb) AS secrets
      FROM credential_sources c`)

    /** Records a new source `registering` with its Secret references. */
    const insert = SqlSchema.void({
      Request: Insert,
      execute: (row) => sql`
        WITH source AS (
          INSERT INTO credential_sources (id, namespace_id, name, type, config, state)
          VALUES (${row.id}, ${row.namespace_id}, ${row.name}, ${row.type}, ${row.config}::jsonb, 'registering')
          RETURNING id
        )
        INSERT INTO credential_source_secret_refs (source_id, field, secret_id)
        SELECT source.id, f.field, f.secret_id FROM source,
          unnest(${row.fields}::text[], ${row.secret_ids}::text[]) AS f (field, secret_id)
      `
    })

    const find = SqlSchema.findOne({
      Request: Key,
      Result: CredentialSourceRow,
      execute: (key) => sql`${select} WHERE c.id = ${key.id} AND c.namespace_id = ${key.namespace_id}`
    })

    /** The row locked FOR UPDATE for a DELETE, or a state change, in the caller's transaction. */
    const lockForUpdate = SqlSchema.findOne({
      Request: Key,
      Result: CredentialSourceRow,
      execute: (key) => sql`${select} WHERE c.id = ${key.id} AND c.namespace_id = ${key.namespace_id} FOR UPDATE OF c`
    })

    /**
     * The row locked FOR KEY SHARE for an Agent binding: a concurrent DELETE waits until the
     * binding commits, then sees it as a referrer.
     */
    const lockForBinding = SqlSchema.findOne({
      Request: Key,
      Result: CredentialSourceRow,
      execute: (key) => sql`${select} WHERE c.id = ${key.id} AND c.namespace_id = ${key.namespace_id} FOR KEY SHARE OF c`
    })

    /** Moves the source to `to` only from one of `from`; whether it moved. */
    const transition = SqlSchema.findOne({
      Request: Transition,
      Result: Schema.Struct({ id: CredentialSourceId }),
      execute: (t) => sql`
        UPDATE credential_sources SET state = ${t.to}, state_changed_at = now()
        WHERE id = ${t.id} AND state IN ${sql.in(t.from)}
        RETURNING id
      `
    })

    /** Deletes the row only while it is `deleting` or `registering` (never a `ready` one). */
    const removeUnsettled = SqlSchema.findOne({
      Request: Schema.Struct({ id: CredentialSourceId, state: CredentialSourceState }),
      Result: Schema.Struct({ id: CredentialSourceId }),
      execute: (r) =>
        deleteWithPolicy(sql, "credential_source", sql`DELETE FROM credential_sources WHERE id = ${r.id} AND state = ${r.state} RETURNING id, namespace_id`)
    })

    /** What still binds the source, or undefined (SPEC 4.6; as for service accounts). */
    const referrer = harnessReferrer(sql, "sourceId")

    const page = (req: typeof Page.Type, visible: Statement.Fragment): PageQuery<typeof CredentialSourceRow.Type> =>
      pageQuery(CredentialSourceRow, sql`
          ${select}
          WHERE c.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "c.id", req.after)}
            AND ${visible}
          ORDER BY c.id
          LIMIT ${req.limit}
        `)

    /**
     * Sources the sweep settles: `registering` ones older than `olderThanMs` become `deleting`
     * (an interrupted registration never becomes usable), then every `deleting` one is listed.
     */
    const unsettled = (olderThanMs: number) =>
      Effect.zipRight(
        sql`
          UPDATE credential_sources SET state = 'deleting', state_changed_at = now()
          WHERE state = 'registering' AND state_changed_at < now() - make_interval(secs => ${olderThanMs / 1000})
        `,
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: Unsettled,
          execute: () => sql`SELECT id, namespace_id FROM credential_sources WHERE state = 'deleting' ORDER BY state_changed_at LIMIT 100`
        })(undefined)
      )

    return {
      insert: (row: typeof Insert.Type) => insert(row).pipe(Effect.orDie),
      find: (key: typeof Key.Type) => find(key).pipe(Effect.orDie),
      lockForUpdate: (key: typeof Key.Type) => lockForUpdate(key).pipe(Effect.orDie),
      lockForBinding: (key: typeof Key.Type) => lockForBinding(key).pipe(Effect.orDie),
      /** As `lockForBinding`, keeping the SqlError for a caller that retries on it (a worker's phase). */
      lockForBindingRetryable: (key: typeof Key.Type) => lockForBinding(key).pipe(Effect.catchTag("ParseError", Effect.die)),
      transition: (t: typeof Transition.Type) => transition(t).pipe(Effect.map(Option.isSome), Effect.orDie),
      removeUnsettled: (r: { readonly id: CredentialSourceId; readonly state: CredentialSourceState }) =>
        removeUnsettled(r).pipe(Effect.map(Option.isSome), Effect.orDie),
      referrer,
      page,
      unsettled
    }
  })
}) {}
